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
//!   control, Ctrl-C and Ctrl-D work as at a keyboard. glibc's
//!   `posix_spawn` runs `POSIX_SPAWN_SETSID` before the file actions, and
//!   the `clone3` child does the same by hand.
//! - The window size (`TIOCSWINSZ`) and the modes (`termios(3)`) are set on
//!   the master, which sets them for the slave. Output post-processing
//!   (`OPOST`, with its `ONLCR`) is turned off: the output is read as text,
//!   not shown on a screen, so `\n` stays `\n` instead of becoming `\r\n`;
//!   and the line discipline then takes a program's writes whole instead of
//!   a byte at a time, which more than doubles what a terminal carries.

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use nix::libc;

/// A new terminal: the master, and the path the command opens.
pub(crate) struct Pty {
    pub master: OwnedFd,
    pub slave: CString,
}

fn check(ret: libc::c_int) -> io::Result<()> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Opens a new pair of `cols` × `rows`.
pub(crate) fn open(cols: u16, rows: u16) -> io::Result<Pty> {
    // SAFETY: a plain call; the descriptor it returns is owned below.
    let fd = unsafe {
        libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC | libc::O_NONBLOCK)
    };
    check(fd)?;
    // SAFETY: just opened, owned by nobody else.
    let master = unsafe { OwnedFd::from_raw_fd(fd) };
    let raw = master.as_raw_fd();
    // SAFETY (the calls below): on the descriptor just opened, with
    // buffers that outlive each call.
    check(unsafe { libc::grantpt(raw) })?;
    check(unsafe { libc::unlockpt(raw) })?;
    let mut name = [0 as libc::c_char; 128];
    let ret = unsafe { libc::ptsname_r(raw, name.as_mut_ptr(), name.len()) };
    if ret != 0 {
        return Err(io::Error::from_raw_os_error(ret));
    }
    // SAFETY: ptsname_r wrote a NUL-terminated name into the buffer.
    let slave = unsafe { CStr::from_ptr(name.as_ptr()) }.to_owned();
    resize(&master, cols, rows)?;
    let mut modes = std::mem::MaybeUninit::<libc::termios>::uninit();
    check(unsafe { libc::tcgetattr(raw, modes.as_mut_ptr()) })?;
    // SAFETY: tcgetattr succeeded, so the struct is filled.
    let mut modes = unsafe { modes.assume_init() };
    modes.c_oflag &= !libc::OPOST;
    check(unsafe { libc::tcsetattr(raw, libc::TCSANOW, &modes) })?;
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
    check(unsafe { libc::ioctl(master.as_raw_fd(), libc::TIOCSWINSZ, &size) })
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
