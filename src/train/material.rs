//! The auxiliary material target: the material balance a few plies later
//! in the game a sample comes from, as the side to move sees it.
//!
//! A self-play shard holds one game, a sample per ply in order, so the
//! position `k` plies on is the sample `k` places on, where each step is a
//! legal move (checked: labelled shards and replay windows need not hold
//! whole games). A chain shorter than `k` ends at the game's last recorded
//! position. Samples that follow from no sample and lead to none (isolated
//! positions) get no target. The balance is [`material_balance`] in units
//! of the variant's most valuable piece, squashed by tanh into [-1, 1].
//! The same [`links`] give the reply target its next positions.

use crate::rules::Position;
use crate::selfplay::Sample;
use crate::selfplay::baselines::{material_balance, material_values};

/// How the material target is trained.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MaterialTarget {
    /// Weight of its loss beside the policy and value losses; 0: off.
    pub weight: f32,
    /// How many plies ahead the balance is taken.
    pub plies: usize,
}

impl Default for MaterialTarget {
    fn default() -> Self {
        MaterialTarget { weight: 0.0, plies: 6 }
    }
}

/// Whether `b` is the position after one legal move from `a`.
pub fn follows(a: &Position, b: &Position) -> bool {
    a.variant() == b.variant()
        && b.move_number() == a.move_number() + 1
        && a.legal_moves().iter().any(|&m| a.hash_after(m) == b.hash())
}

/// Per sample, in their order: whether the next sample is the position
/// after one legal move from it (the two are consecutive in a game).
pub fn links(samples: &[Sample]) -> Vec<bool> {
    (0..samples.len().saturating_sub(1))
        .map(|i| follows(&samples[i].position, &samples[i + 1].position))
        .chain((!samples.is_empty()).then_some(false))
        .collect()
}

/// The material target of every sample, in their order (`None`: no
/// target), from the samples' [`links`].
pub fn material_targets(samples: &[Sample], linked: &[bool], plies: usize) -> Vec<Option<f32>> {
    let n = samples.len();
    let Some(first) = samples.first() else { return Vec::new() };
    // Training reads one variant's shards.
    let values = material_values(first.position.variant());
    let top = values.iter().copied().fold(0.0f32, f32::max).max(1.0);
    (0..n)
        .map(|i| {
            let before = i > 0 && linked[i - 1];
            if !linked[i] && !before {
                return None;
            }
            let mut j = i;
            while j < i + plies && linked[j] {
                j += 1;
            }
            let me = &samples[i].position;
            Some((material_balance(&samples[j].position, &values, me.side_to_move()) / top).tanh())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Variant;

    fn sample(position: Position) -> Sample {
        Sample {
            position,
            repetitions: 1,
            value: 0.0,
            full_search: false,
            policy: Vec::new(),
            teacher: None,
            search: None,
        }
    }

    fn line(moves: &[&str]) -> Vec<Sample> {
        let mut pos = Position::startpos(Variant::Minishogi);
        let mut out = vec![sample(pos.clone())];
        for m in moves {
            let mv = crate::notation::parse_move(&pos, m).expect("legal move");
            pos = pos.play(mv);
            out.push(sample(pos.clone()));
        }
        out
    }

    #[test]
    fn the_balance_comes_from_the_position_plies_later_in_the_game() {
        // Sente's bishop takes Gote's on the third ply. Minishogi's most
        // valuable piece is the dragon.
        let game = line(&["2e3d", "4a2c", "3d2c"]);
        let values = material_values(Variant::Minishogi);
        let top = values.iter().copied().fold(0.0, f32::max);
        let balance = |at: usize, seen_from: usize| {
            material_balance(&game[at].position, &values, game[seen_from].position.side_to_move())
        };
        assert_eq!(balance(2, 0), 0.0);
        assert!(balance(3, 0) > 0.0, "sente is a bishop up after the capture");
        let targets = material_targets(&game, &links(&game), 3);
        assert_eq!(targets[0], Some((balance(3, 0) / top).tanh()));
        // Two plies ahead from the start, nothing has been taken yet.
        assert_eq!(material_targets(&game, &links(&game), 2)[0], Some(0.0));
        // Gote sees the loss; the chain ends at the game's last position.
        assert_eq!(targets[1], Some((balance(3, 1) / top).tanh()));
        assert!(targets[1].unwrap() < 0.0);
        assert_eq!(targets[3], Some((balance(3, 3) / top).tanh()));
    }

    #[test]
    fn a_chain_breaks_where_no_legal_move_leads_on_and_isolated_samples_get_none() {
        let mut samples = line(&["2e3d"]);
        samples.push(sample(Position::startpos(Variant::Minishogi)));
        let targets = material_targets(&samples, &links(&samples), 4);
        assert!(targets[0].is_some() && targets[1].is_some());
        assert_eq!(targets[2], None);
        assert!(follows(&samples[0].position, &samples[1].position));
        assert!(!follows(&samples[1].position, &samples[0].position));
        assert!(!follows(&samples[1].position, &samples[2].position));
    }
}
