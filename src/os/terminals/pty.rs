//! A pseudo-terminal for an interactive command (`pty(7)`): the master
//! side stays with us, the command opens the slave by its path.
//!
//! - `posix_openpt(3)`, `grantpt(3)`, `unlockpt(3)`, `ptsname_r(3)`: a new
//!   pair. The master is close-on-exec, so no command inherits it, and
//!   non-blocking, so the one I/O thread that serves every terminal
//!   (`terminals`) never blocks on one of them.
//! - We never open the slave: once the command and everything it started
//!   have closed it, a read of the master fails with EIO, which is how the
//!   I/O thread knows nothing can write any more.
//! - The command opens the slave by its path as its stdin, stdout and
//!   stderr, right after `setsid(2)` and without `O_NOCTTY`, so the
//!   terminal becomes its controlling terminal (`credentials(7)`): job
//!   control, Ctrl-C and Ctrl-D work as at a keyboard (the launcher's
//!   child does it after its `setsid`).
//! - The window size (`TIOCSWINSZ`) and the modes (`termios(3)`) are set on
//!   the master, which sets them for the slave. Output post-processing
//!   (`OPOST`, with its `ONLCR`) is turned off: the output is read as text,
//!   not shown on a screen, so `\n` stays `\n` instead of becoming `\r\n`;
//!   and the line discipline then takes a program's writes whole instead of
//!   a byte at a time, which more than doubles what a terminal carries.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd};

use nix::fcntl::OFlag;
use nix::libc;
use nix::pty::{grantpt, posix_openpt, ptsname_r, unlockpt};
use nix::sys::termios::{tcgetattr, tcsetattr, OutputFlags, SetArg};

/// A new terminal: the master, and the path the command opens.
pub(crate) struct Pty {
    pub master: OwnedFd,
    pub slave: CString,
}

nix::ioctl_write_ptr_bad!(set_window_size, libc::TIOCSWINSZ, libc::winsize);

/// Opens a new pair of `cols` × `rows`.
pub(crate) fn open(cols: u16, rows: u16) -> io::Result<Pty> {
    let master =
        posix_openpt(OFlag::O_RDWR | OFlag::O_NOCTTY | OFlag::O_CLOEXEC | OFlag::O_NONBLOCK)?;
    grantpt(&master)?;
    unlockpt(&master)?;
    let slave = CString::new(ptsname_r(&master)?)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "a NUL in the terminal's name"))?;
    // SAFETY: the descriptor comes out of the PtyMaster, which gives it up.
    let master = unsafe { OwnedFd::from_raw_fd(master.into_raw_fd()) };
    resize(&master, cols, rows)?;
    let mut modes = tcgetattr(&master)?;
    modes.output_flags.remove(OutputFlags::OPOST);
    tcsetattr(&master, SetArg::TCSANOW, &modes)?;
    Ok(Pty { master, slave })
}

/// Sets the window size of the terminal whose master is `master`.
pub(crate) fn resize(master: &OwnedFd, cols: u16, rows: u16) -> io::Result<()> {
    let size = libc::winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCSWINSZ reads the winsize it is given.
    unsafe { set_window_size(master.as_raw_fd(), &size) }?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_terminal_has_a_slave_path_and_its_size() {
        let pty = open(100, 30).unwrap();
        assert!(pty.slave.to_str().unwrap().starts_with("/dev/pts/"));
        let mut size = libc::winsize {
            ws_row: 0,
            ws_col: 0,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: TIOCGWINSZ fills the winsize it is given.
        let ret = unsafe { libc::ioctl(pty.master.as_raw_fd(), libc::TIOCGWINSZ, &mut size) };
        assert_eq!(ret, 0);
        assert_eq!((size.ws_col, size.ws_row), (100, 30));
    }
}
