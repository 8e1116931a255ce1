//! Reading this process's effective capabilities (`/proc/self/status`):
//! what the restrictions and the read-only view may do here.

/// `CAP_SYS_ADMIN`.
pub(crate) const CAP_SYS_ADMIN: u32 = 21;

/// Whether this process has capability `cap` in its effective set
/// (`CapEff` of `/proc/self/status`).
pub(crate) fn has_effective(cap: u32) -> bool {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .is_some_and(|set| set & (1 << cap) != 0)
}
