//! When a search stops: node and time limits, and time management for
//! clocks with increments or byoyomi.

use std::time::Duration;

/// The clock of the side to move.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Clock {
    /// Main time left.
    pub remaining: Duration,
    /// Added after each move (Fischer).
    pub increment: Duration,
    /// Time per move once main time is spent (byoyomi).
    pub byoyomi: Duration,
    /// Moves until the next time control, if known.
    pub moves_to_go: Option<u32>,
}

/// What ends a search. With several limits, the first reached wins; with
/// none (and not infinite), the search runs until stopped.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Limits {
    /// Playouts (completed visits of the root) in this search.
    pub nodes: Option<u64>,
    /// Fixed time for this move.
    pub movetime: Option<Duration>,
    /// Clock-based time management.
    pub clock: Option<Clock>,
    /// Stop once the principal variation is this many plies long.
    pub depth: Option<u32>,
    /// Search until stopped (`go infinite`).
    pub infinite: bool,
    /// Start as a ponder search: no limit applies until the ponder hit.
    pub ponder: bool,
    /// Kept in hand from the clock for communication and overhead.
    pub margin: Duration,
}

/// Time to use for one move.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct TimeBudget {
    /// Aim to stop here (earlier if the best move cannot change).
    pub target: Duration,
    /// Never run past this.
    pub hard: Duration,
}

/// Splits the clock into a budget for this move, keeping `margin` in hand
/// for communication and process overhead.
pub fn budget(clock: &Clock, margin: Duration) -> TimeBudget {
    let min = Duration::from_millis(10);
    // Everything this move may use without flagging.
    let available = (clock.remaining + clock.byoyomi).saturating_sub(margin).max(min);
    let moves_left = clock.moves_to_go.unwrap_or(30).clamp(1, 60);
    let share = clock.remaining / moves_left + clock.increment.mul_f64(0.8) + clock.byoyomi;
    let target = share.saturating_sub(margin).max(min).min(available);
    // Allow an unclear position up to three shares, never past what is
    // available, and without byoyomi or increment never more than a
    // quarter of the remaining time.
    let mut hard = (share * 3).min(available);
    if clock.byoyomi.is_zero() && clock.increment.is_zero() {
        hard = hard.min(clock.remaining / 4).max(target);
    }
    TimeBudget { target, hard: hard.max(target) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn byoyomi_only_uses_the_byoyomi_less_the_margin() {
        let b = budget(&Clock { byoyomi: ms(1000), ..Clock::default() }, ms(50));
        assert_eq!(b.target, ms(950));
        assert_eq!(b.hard, ms(950));
    }

    #[test]
    fn sudden_death_keeps_most_of_the_clock() {
        let b = budget(&Clock { remaining: ms(60_000), ..Clock::default() }, ms(50));
        assert!(b.target >= ms(1500) && b.target <= ms(2500), "{b:?}");
        assert!(b.hard <= ms(15_000));
    }

    #[test]
    fn never_more_than_the_clock_holds() {
        for remaining in [0, 5, 30, 100, 1000] {
            for byoyomi in [0, 100] {
                let c = Clock { remaining: ms(remaining), byoyomi: ms(byoyomi), ..Clock::default() };
                let b = budget(&c, ms(20));
                let avail = (ms(remaining + byoyomi).saturating_sub(ms(20))).max(ms(10));
                assert!(b.hard <= avail && b.target <= b.hard, "{c:?}: {b:?}");
            }
        }
    }

    #[test]
    fn increment_is_spent() {
        let b = budget(&Clock { remaining: ms(10_000), increment: ms(2000), ..Clock::default() }, ms(50));
        assert!(b.target > ms(1600), "{b:?}");
    }
}
