//! The key's bases kept on the device between calls, where the card has room.
//!
//! Phase 2 reads every base of the key's h, l, a, b_g1 and b_g2 once per
//! partition: 47 GB at porep-32g, streamed up a chunk at a time (~1 s of
//! copies per partition on the H200). On a card with room for the whole key
//! beside a computing call's peak and one pre-stage (an 80 GB H100 or a
//! 141 GiB H200 against a 47 GB key), the first call of a key uploads the bases in phase
//! 1 under the memory lock, and later calls' MSMs and batch additions read
//! them in place (`msm::chunked`). One key per device at a time
//! (`SUPRASEAL_C2_KEY_RESIDENT=auto`, the default; `off` streams them in
//! every call).
//!
//! The copy is released when its key is dropped ([`forget_key`], run by the
//! guard that phase 0 stores in the key, [`watch`], dropped before the key's
//! host vectors are freed), when a call's admission
//! finds too little room for even a computing call's peak, and when calls of
//! another key have found it unused [`IDLE_CALLS`] times and that key would
//! fit in its place. A call reading the copy holds it (an `Arc`) while its
//! chunks run; the free is ordered on the device after every read (cudarc's
//! events), and the memory goes back to the device at the next pool trim.
//!
//! The copy is found by the host address of the bases, so the key's vectors
//! must not change while it lives: [`Srs`](crate::srs::Srs) gives them out
//! read-only.

/// Calls of other keys after which a resident copy that none of them could
/// use gives way to the key of the next call that would fit in its place
/// (so two keys used in turn do not swap 47 GB back and forth).
pub const IDLE_CALLS: usize = 8;

/// The room a call's admission measured, in bytes.
#[derive(Clone, Copy, Debug)]
pub struct Room {
    /// Free for this call's pre-stage (counting the pre-stage pool's cache).
    pub avail: usize,
    /// Free for phase-2 and resident allocations (`avail` less what only
    /// pre-stages can reuse).
    pub compute_avail: usize,
    /// One circuit's pre-stage (its a, b, c).
    pub one_circuit: usize,
    /// A computing call's peak plus the margin.
    pub reserve: usize,
    /// Compute-pool bytes that a call's phase 2 holds now, which the running
    /// call gives back before a waiting call's phase 2 starts: counted only
    /// where every call in flight on the device runs under the waiting
    /// call's locks (one compute lock, so their phase 2s cannot overlap) and
    /// the compute cache's shape is the waiting call's, as a
    /// `SUPRASEAL_C2_VRAM_LIMIT_MB` card gets them back; else 0.
    pub returning: usize,
}

/// What admission does with the device's resident copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// This call's key is resident: read it in place.
    Keep,
    /// Free the copy (this call then streams; a later call may upload).
    Release,
    /// Leave things as they are and stream this call's bases.
    Stream,
    /// Nothing is resident and this key fits: upload it.
    Upload,
}

/// The rule of [`admit`], from the figures alone: `current` is the resident
/// copy as (this call's key?, its bytes, calls of other keys since its last
/// use, this one included), `key_bytes` this call's key, `enabled` its
/// `SUPRASEAL_C2_KEY_RESIDENT`, `failed_before` whether its upload failed on
/// this device already.
pub fn decide(current: Option<(bool, usize, usize)>, room: Room, key_bytes: usize, enabled: bool, failed_before: bool) -> Decision {
    let Room { avail, compute_avail, one_circuit, reserve, returning } = room;
    // One one-circuit pre-stage beside the key (the next call's, or the next
    // circuit's staged ahead), where a circuit can pre-stage at all. Neither
    // a second pre-stage nor a call of many circuits is counted: the
    // resident bases save more than pre-staging does (~1 s of bases per
    // partition at porep-32g on the H200 against 0.25 s for a circuit's a,
    // b, c uploaded in the call's turn), and that one pre-stage is what
    // puts a 47 GB key on an 80 GB card.
    // Saturating: a margin of up to 2^44 − 1 MiB parses.
    let stage = if one_circuit.saturating_add(reserve) <= avail { one_circuit } else { 0 };
    let room_for = |free: usize| key_bytes > 0 && free >= key_bytes.saturating_add(reserve).saturating_add(stage);
    match current {
        // Not even a computing call's peak fits, with what the running phase 2
        // gives back by this call's turn: any copy gives its room. (Without
        // that count a third call in flight, beside a computing one and a
        // pre-staged one, would release a porep-32g key on an 80 GB card.)
        Some(_) if reserve > compute_avail.saturating_add(returning) => Decision::Release,
        Some((true, _, _)) => Decision::Keep,
        Some((false, bytes, idle)) if idle >= IDLE_CALLS && enabled && room_for(compute_avail + bytes) => Decision::Release,
        Some(_) => Decision::Stream,
        None if enabled && !failed_before && room_for(compute_avail) => Decision::Upload,
        None => Decision::Stream,
    }
}

#[cfg(test)]
mod tests {
    use super::{decide, Decision, Room, IDLE_CALLS};

    const GB: usize = 1 << 30;
    /// porep-32g: key 44 GiB, pre-stage 12 GiB, reserve 12.5 GiB.
    fn room(free: usize) -> Room {
        Room { avail: free, compute_avail: free, one_circuit: 12 * GB, reserve: 25 * GB / 2, returning: 0 }
    }

    #[test]
    fn uploads_where_the_key_fits_beside_one_prestage_and_the_peak() {
        // A 141 GiB H200, and an 80 GB H100's ~78.5 GiB free: 44 + 12.5 + 12 = 68.5 GiB.
        assert_eq!(decide(None, room(139 * GB), 44 * GB, true, false), Decision::Upload);
        assert_eq!(decide(None, room(78 * GB), 44 * GB, true, false), Decision::Upload);
        assert_eq!(decide(None, room(137 * GB / 2), 44 * GB, true, false), Decision::Upload);
        // Half a GiB short of the pre-stage beside it, though the key and the peak fit.
        assert_eq!(decide(None, room(68 * GB), 44 * GB, true, false), Decision::Stream);
        // Where a circuit cannot pre-stage beside the peak (a small card),
        // the key needs only the peak beside it.
        let tight = Room { avail: 59 * GB, compute_avail: 59 * GB, one_circuit: 48 * GB, reserve: 12 * GB, returning: 0 };
        assert_eq!(decide(None, tight, 44 * GB, true, false), Decision::Upload);
        // A 16 GiB card: never.
        assert_eq!(decide(None, room(15 * GB), 44 * GB, true, false), Decision::Stream);
        // Switched off, failed before, or an empty key: never.
        assert_eq!(decide(None, room(139 * GB), 44 * GB, false, false), Decision::Stream);
        assert_eq!(decide(None, room(139 * GB), 44 * GB, true, true), Decision::Stream);
        assert_eq!(decide(None, room(139 * GB), 0, true, false), Decision::Stream);
    }

    #[test]
    fn keeps_its_own_copy_and_releases_it_only_when_the_peak_does_not_fit() {
        assert_eq!(decide(Some((true, 44 * GB, 0)), room(95 * GB), 44 * GB, true, false), Decision::Keep);
        assert_eq!(decide(Some((true, 44 * GB, 0)), room(12 * GB), 44 * GB, true, false), Decision::Release);
        // Switched off: no upload, but the room is still given back under pressure.
        assert_eq!(decide(Some((false, 44 * GB, 1)), room(12 * GB), 44 * GB, false, false), Decision::Release);
    }

    #[test]
    fn counts_what_the_running_phase_2_gives_back_before_releasing() {
        // porep-32g on an 80 GB card, the key resident: a third call finds one
        // call computing (12 GiB of the compute pool in use) and one pre-staged.
        let busy = Room { returning: 12 * GB, ..room(11 * GB) };
        assert_eq!(decide(Some((true, 44 * GB, 0)), busy, 44 * GB, true, false), Decision::Keep);
        // What comes back still leaves the peak short: released.
        let short = Room { returning: GB, ..room(11 * GB) };
        assert_eq!(decide(Some((true, 44 * GB, 0)), short, 44 * GB, true, false), Decision::Release);
        // Another key's copy is kept by the same count (the call streams).
        assert_eq!(decide(Some((false, 44 * GB, 1)), busy, 44 * GB, true, false), Decision::Stream);
    }

    #[test]
    fn another_keys_copy_gives_way_only_after_idle_calls_and_when_this_key_fits() {
        let other = |idle| Some((false, 44 * GB, idle));
        for idle in 1..IDLE_CALLS {
            assert_eq!(decide(other(idle), room(95 * GB), 44 * GB, true, false), Decision::Stream, "idle {idle}");
        }
        assert_eq!(decide(other(IDLE_CALLS), room(95 * GB), 44 * GB, true, false), Decision::Release);
        // Idle, but this key would not fit even in its place: keep the other.
        assert_eq!(decide(other(IDLE_CALLS), room(20 * GB), 100 * GB, true, false), Decision::Stream);
        // Idle, but this call does not want residency.
        assert_eq!(decide(other(IDLE_CALLS), room(95 * GB), 44 * GB, false, false), Decision::Stream);
    }
}

#[cfg(supraseal_gpu)]
pub mod copy;
#[cfg(supraseal_gpu)]
mod device_side;
#[cfg(supraseal_gpu)]
pub use device_side::*;
