//! Gumbel AlphaZero's root (Danihelka et al., "Policy improvement by
//! planning with Gumbel", ICLR 2022), as pure functions over the root's
//! moves; the search applies them (`search::worker`).
//!
//! - Gumbel-top-k: each root move gets a Gumbel(0, 1) draw `g`; the moves
//!   with the highest `g + logit` are the considered ones (`m` of them).
//! - Sequential Halving spreads the playout budget over them in phases,
//!   halving the survivors after each by `g + logit + sigma(q)`. As in
//!   DeepMind's `mctx`, the phases are a schedule of visit counts: playout
//!   `i` goes to the best-scoring move whose visits equal
//!   [`considered_visit`]`(m, n, i)`, which yields exactly the phases.
//! - The policy target is softmax(logit + sigma(completed q)), where a
//!   move never visited is completed with the mixed value
//!   ([`mixed_value`]) and sigma(q) = (c_visit + max visits) * c_scale * q
//!   on q min-max normalised to [0, 1] over the root's moves.

/// Gumbel root settings; the defaults are the paper's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GumbelParams {
    /// Moves considered at the root (m).
    pub considered: usize,
    /// sigma's visit offset (c_visit).
    pub c_visit: f64,
    /// sigma's scale (c_scale).
    pub c_scale: f64,
    /// Whether the root's moves get Gumbel noise (self-play); without it
    /// the search is Sequential Halving on the net's logits (play).
    pub noise: bool,
}

impl Default for GumbelParams {
    fn default() -> GumbelParams {
        GumbelParams { considered: 16, c_visit: 50.0, c_scale: 1.0, noise: true }
    }
}

/// The lowest logit a move gets (a prior of 0 has none).
const MIN_LOGIT: f64 = -30.0;

/// A prior as a logit: its natural logarithm (softmax of the logits gives
/// the priors back).
pub fn logit(prior: f64) -> f64 {
    if prior > 0.0 { prior.ln().max(MIN_LOGIT) } else { MIN_LOGIT }
}

/// The visit count playout `i` (0-based) of a budget of `n` playouts
/// looks for among `m` considered moves: Sequential Halving's phases,
/// ceil(log2 m) of them, each giving every surviving move
/// max(1, n / (ceil(log2 m) * survivors)) more visits, the survivors
/// halving (to no fewer than 2) after each; once the phases are spent, the
/// last two go on alternating. With `m` <= 1 every playout goes to the one
/// move (its visits are `i`). This is `mctx`'s
/// `get_sequence_of_considered_visits`, computed for one `i`.
pub fn considered_visit(m: usize, n: u64, i: u64) -> u32 {
    if m <= 1 {
        return i as u32;
    }
    let log2m = u64::from(usize::BITS - (m - 1).leading_zeros());
    let (mut survivors, mut start, mut level) = (m as u64, 0u64, 0u64);
    loop {
        let rounds = (n / (log2m * survivors)).max(1);
        if i < start + rounds * survivors {
            return (level + (i - start) / survivors) as u32;
        }
        start += rounds * survivors;
        level += rounds;
        survivors = (survivors / 2).max(2);
    }
}

/// The value that completes a move never visited: the net's value of the
/// root mixed with the visited moves' q weighted by their priors,
/// (v + N * sum(p q) / sum(p)) / (1 + N), N the visits of all moves.
/// `moves` are (prior, q from the root's view, visits); with no visits it
/// is `raw_value`.
pub fn mixed_value(raw_value: f64, moves: &[(f64, f64, u32)]) -> f64 {
    let total: u64 = moves.iter().map(|m| u64::from(m.2)).sum();
    let visited = moves.iter().filter(|m| m.2 > 0);
    let prior_sum: f64 = visited.clone().map(|m| m.0.max(f64::MIN_POSITIVE)).sum();
    if total == 0 || prior_sum <= 0.0 {
        return raw_value;
    }
    let weighted_q: f64 = visited.map(|m| m.0.max(f64::MIN_POSITIVE) * m.1).sum::<f64>() / prior_sum;
    (raw_value + total as f64 * weighted_q) / (1.0 + total as f64)
}

/// sigma(completed q) per move: visited moves keep their q, the others get
/// the mixed value; all are min-max normalised to [0, 1] and scaled by
/// (c_visit + max visits) * c_scale. `moves` as for [`mixed_value`].
pub fn sigma_completed_q(params: &GumbelParams, raw_value: f64, moves: &[(f64, f64, u32)]) -> Vec<f64> {
    let mixed = mixed_value(raw_value, moves);
    let completed: Vec<f64> = moves.iter().map(|m| if m.2 > 0 { m.1 } else { mixed }).collect();
    let lo = completed.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = completed.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let max_visits = moves.iter().map(|m| m.2).max().unwrap_or(0);
    let scale = (params.c_visit + f64::from(max_visits)) * params.c_scale;
    completed.iter().map(|&q| scale * (q - lo) / (hi - lo).max(1e-8)).collect()
}

/// The improved policy: softmax(logit + sigma(completed q)) over the moves
/// (as for [`mixed_value`]).
pub fn improved_policy(params: &GumbelParams, raw_value: f64, moves: &[(f64, f64, u32)]) -> Vec<f64> {
    let sigma = sigma_completed_q(params, raw_value, moves);
    let scores: Vec<f64> = moves.iter().zip(&sigma).map(|(m, s)| logit(m.0) + s).collect();
    softmax(&scores)
}

fn softmax(x: &[f64]) -> Vec<f64> {
    let top = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = x.iter().map(|&v| (v - top).exp()).collect();
    let sum: f64 = e.iter().sum();
    e.iter().map(|v| v / sum).collect()
}

/// The move to visit, or to play: among the moves whose `counted` visits
/// equal `level`, the one with the highest g + logit + sigma(completed q);
/// None when no move has that many. `moves` as for [`mixed_value`] (q and
/// visits over the whole tree), `gumbel` per move, `counted` the visits
/// Sequential Halving counts (this search's, virtual ones included).
pub fn select(
    params: &GumbelParams,
    raw_value: f64,
    moves: &[(f64, f64, u32)],
    gumbel: &[f64],
    (counted, level): (&[u32], u32),
) -> Option<usize> {
    let sigma = sigma_completed_q(params, raw_value, moves);
    let mut best: Option<(f64, usize)> = None;
    for (i, m) in moves.iter().enumerate() {
        if counted[i] != level {
            continue;
        }
        let score = gumbel[i] + logit(m.0) + sigma[i];
        if best.is_none_or(|(s, _)| score > s) {
            best = Some((score, i));
        }
    }
    best.map(|(_, i)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `mctx`'s sequence, written as it is there, to check the closed form.
    fn mctx_sequence(m: usize, n: usize) -> Vec<u32> {
        if m <= 1 {
            return (0..n as u32).collect();
        }
        let log2max = (m as f64).log2().ceil() as usize;
        let mut sequence = Vec::new();
        let mut visits = vec![0u32; m];
        let mut considered = m;
        while sequence.len() < n {
            let extra = (n / (log2max * considered)).max(1);
            for _ in 0..extra {
                sequence.extend_from_slice(&visits[..considered]);
                for v in &mut visits[..considered] {
                    *v += 1;
                }
            }
            considered = (considered / 2).max(2);
        }
        sequence.truncate(n);
        sequence
    }

    #[test]
    fn the_schedule_is_mctx_sequence() {
        for m in [1, 2, 3, 4, 5, 8, 16, 17, 32] {
            for n in [1, 2, 7, 8, 16, 32, 50, 64, 100, 200, 800] {
                let ours: Vec<u32> = (0..n as u64).map(|i| considered_visit(m, n as u64, i)).collect();
                assert_eq!(ours, mctx_sequence(m, n), "m {m}, n {n}");
            }
        }
    }

    #[test]
    fn sixteen_moves_and_sixty_four_playouts_halve_in_four_phases() {
        // 4 phases of 16 playouts: 16 moves get 1 visit, 8 of them 2 more,
        // 4 of those 4 more, the last 2 8 more (15 visits each).
        let seq: Vec<u32> = (0..64).map(|i| considered_visit(16, 64, i)).collect();
        assert!(seq[..16].iter().all(|&v| v == 0));
        assert_eq!(&seq[16..24], &[1; 8]);
        assert_eq!(&seq[24..32], &[2; 8]);
        assert_eq!(&seq[32..36], &[3; 4]);
        assert_eq!(&seq[48..50], &[7, 7]);
        assert_eq!(seq[63], 14);
    }

    #[test]
    fn mixed_value_weights_visited_moves_by_prior() {
        // Visited: (0.5, q 0.2, 3) and (0.25, q -0.4, 1); total visits 4.
        let moves = [(0.5, 0.2, 3), (0.25, -0.4, 1), (0.25, 0.0, 0)];
        let weighted = (0.5 * 0.2 + 0.25 * -0.4) / 0.75;
        let expected = (0.1 + 4.0 * weighted) / 5.0;
        assert!((mixed_value(0.1, &moves) - expected).abs() < 1e-12);
        assert_eq!(mixed_value(0.3, &[(0.5, 0.9, 0), (0.5, -0.9, 0)]), 0.3);
    }

    #[test]
    fn the_improved_policy_is_the_formula() {
        let params = GumbelParams::default();
        let moves: [(f64, f64, u32); 3] = [(0.6, 0.1, 5), (0.3, 0.5, 2), (0.1, 0.0, 0)];
        let raw = -0.2;
        // By hand: mixed value, completed q, min-max, sigma, softmax.
        let weighted = (0.6 * 0.1 + 0.3 * 0.5) / 0.9;
        let mixed = (raw + 7.0 * weighted) / 8.0;
        let completed = [0.1, 0.5, mixed];
        let (lo, hi) = (0.1f64.min(mixed), 0.5);
        let scale = (50.0 + 5.0) * 1.0;
        let scores: Vec<f64> =
            moves.iter().zip(completed).map(|(m, q)| m.0.ln() + scale * (q - lo) / (hi - lo)).collect();
        let top = scores.iter().copied().fold(f64::MIN, f64::max);
        let sum: f64 = scores.iter().map(|s| (s - top).exp()).sum();
        let expected: Vec<f64> = scores.iter().map(|s| (s - top).exp() / sum).collect();
        let ours = improved_policy(&params, raw, &moves);
        for (a, b) in ours.iter().zip(&expected) {
            assert!((a - b).abs() < 1e-12, "{ours:?} vs {expected:?}");
        }
        // The best q dominates at c_visit 50: almost all the mass.
        assert!(ours[1] > 0.99);
    }

    #[test]
    fn select_takes_the_best_score_at_the_level() {
        let params = GumbelParams::default();
        let moves = [(0.5, 0.0, 1), (0.3, 0.0, 1), (0.2, 0.0, 0)];
        let gumbel = [0.0, 0.0, 5.0];
        // Level 0: only the unvisited move is eligible.
        assert_eq!(select(&params, 0.0, &moves, &gumbel, (&[1, 1, 0], 0)), Some(2));
        // Level 1: equal q, so g + logit decides between the first two.
        assert_eq!(select(&params, 0.0, &moves, &gumbel, (&[1, 1, 0], 1)), Some(0));
        assert_eq!(select(&params, 0.0, &moves, &gumbel, (&[1, 1, 0], 2)), None);
    }
}
