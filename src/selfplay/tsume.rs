//! Mate problems from random playouts ("tsume", as shogi engines call
//! them), as training data and as a held-out benchmark.
//!
//! Self-play meets mates only in the last moves of its games, so its nets
//! give the checks and sacrifices that mate priors of 1e-5 to 1e-4 and a
//! tree guided by them rarely tries them. A random playout is stopped where
//! the side to move has a forced win that the mate search finds, and the
//! mating line becomes samples: each attacker position with its mating move
//! as the whole policy target and value +1, each defender position with
//! value -1 and no policy target.
//!
//! The search tests' problems ([`crate::mcts::problems`]) also come from
//! random playouts; a generated position equal to one of them is skipped,
//! so nets are never trained on the problems they are measured on.

use super::record::{Sample, SelfPlayError, Shard};
use crate::mcts::{Rng, find_mate, mate_line};
use crate::rules::{Game, Position, Variant};
use std::path::PathBuf;

/// The model id of tsume shards (no net played them).
pub const TSUME_MODEL_ID: &str = "tsume";

/// Plies of random play before a position is tried (the opening has no
/// mates worth learning).
const FIRST_PLY: usize = 16;
/// A playout that has not ended by then starts over.
const LAST_PLY: usize = 300;

/// Settings of [`write_samples`].
#[derive(Clone, Debug)]
pub struct TsumeConfig {
    pub variant: Variant,
    /// Samples to write (reached or passed: a mate's line is kept whole).
    pub samples: usize,
    /// Longest mate looked for, in plies (odd).
    pub max_plies: u32,
    /// Mate search budget per position tried, in positions.
    pub budget: u64,
    /// Share of the mates in one that are kept (they are the commonest,
    /// and the leaf mate search finds them without the net's help).
    pub mate_in_one_share: f64,
    pub threads: usize,
    pub seed: u64,
    /// Directory of the shards.
    pub out: PathBuf,
}

/// What [`write_samples`] wrote.
#[derive(Clone, Debug, Default)]
pub struct TsumeReport {
    pub samples: usize,
    /// Mates used, by length: `mates[k]` has length `2k + 1` plies.
    pub mates: Vec<usize>,
    /// Positions the mate search was run on.
    pub tried: u64,
    pub shards: Vec<PathBuf>,
}

impl std::fmt::Display for TsumeReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let lengths: Vec<String> = self
            .mates
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(k, n)| format!("{n} in {}", 2 * k + 1))
            .collect();
        write!(
            f,
            "{} samples from {} mates ({}) among {} positions tried",
            self.samples,
            self.mates.iter().sum::<usize>(),
            if lengths.is_empty() { "none".to_string() } else { lengths.join(", ") },
            self.tried
        )
    }
}

/// A position reached by random play whose side to move wins by force.
#[derive(Clone, Debug)]
pub struct RandomMate {
    /// The game, at the problem position (its history counts for
    /// repetitions).
    pub game: Game,
    /// The shortest win found, in plies.
    pub plies: u32,
}

/// Random playouts stopped at positions with a mate.
pub struct RandomMates {
    variant: Variant,
    rng: Rng,
    game: Game,
    max_plies: u32,
    budget: u64,
    mate_in_one_share: f64,
    /// Hashes of the search tests' problems, never produced.
    excluded: Vec<u64>,
    /// Positions the mate search was run on so far.
    pub tried: u64,
}

impl RandomMates {
    pub fn new(variant: Variant, seed: u64, max_plies: u32, budget: u64, mate_in_one_share: f64) -> RandomMates {
        let excluded = crate::mcts::problems::all()
            .into_iter()
            .filter(|p| p.variant == variant)
            .filter_map(|p| crate::notation::parse_position(variant, p.sfen).ok())
            .map(|p| p.hash())
            .collect();
        RandomMates {
            variant,
            rng: Rng::new(seed),
            game: Game::new(Position::startpos(variant)),
            max_plies,
            budget,
            mate_in_one_share,
            excluded,
            tried: 0,
        }
    }

    /// The next problem, or `None` once `max_tried` positions have been
    /// tried in all (so a setting under which mates never turn up ends).
    pub fn next_until(&mut self, max_tried: u64) -> Option<RandomMate> {
        while self.tried < max_tried {
            let legal = self.game.legal_moves();
            if self.game.outcome().is_some() || legal.is_empty() || self.game.moves().len() >= LAST_PLY {
                self.game = Game::new(Position::startpos(self.variant));
                continue;
            }
            let mut found = None;
            if self.game.moves().len() >= FIRST_PLY && !self.excluded.contains(&self.game.position().hash()) {
                self.tried += 1;
                if let Some((_, plies)) = find_mate(&mut self.game, &legal, self.max_plies, self.budget)
                    && (plies > 1 || self.rng.uniform() < self.mate_in_one_share)
                {
                    found = Some(RandomMate { game: self.game.branch(), plies });
                }
            }
            let mv = legal[self.rng.below(legal.len())];
            self.game.play(mv);
            if found.is_some() {
                return found;
            }
        }
        None
    }
}

/// The samples of one mate: its line from the problem position.
pub fn mate_samples(problem: &RandomMate, budget: u64) -> Vec<Sample> {
    let mut game = problem.game.branch();
    let winner = game.position().side_to_move();
    let line = mate_line(&mut game, winner, problem.plies, budget);
    let mut samples = Vec::with_capacity(line.len());
    for mv in line {
        let attacker = game.position().side_to_move() == winner;
        samples.push(Sample {
            position: game.position().clone(),
            repetitions: game.repetitions(),
            value: if attacker { 1.0 } else { -1.0 },
            full_search: attacker,
            policy: if attacker { vec![(mv, 1)] } else { Vec::new() },
            teacher: None,
            search: None,
        });
        game.play(mv);
    }
    samples
}

/// Generates mates on `config.threads` threads and writes their samples
/// as shards (one per thread) into `config.out`.
pub fn write_samples(config: &TsumeConfig) -> Result<TsumeReport, SelfPlayError> {
    if config.max_plies == 0 || config.max_plies.is_multiple_of(2) {
        return Err(SelfPlayError::EvenMateLength(config.max_plies));
    }
    super::record::create_dir(&config.out)?;
    let threads = config.threads.clamp(1, config.samples.max(1));
    let results: Vec<Result<TsumeReport, SelfPlayError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    let want = config.samples / threads + usize::from(t < config.samples % threads);
                    let seed = config.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(t as u64);
                    let mut source = RandomMates::new(
                        config.variant,
                        seed,
                        config.max_plies,
                        config.budget,
                        config.mate_in_one_share,
                    );
                    let mut report =
                        TsumeReport { mates: vec![0; config.max_plies as usize / 2 + 1], ..Default::default() };
                    let mut samples = Vec::new();
                    // A generous cap on tries, so a variant or budget in
                    // which mates never turn up still ends.
                    let max_tried = 10_000 + 2_000 * want as u64;
                    while samples.len() < want {
                        let Some(problem) = source.next_until(max_tried) else { break };
                        let line = mate_samples(&problem, config.budget);
                        if line.is_empty() {
                            continue;
                        }
                        report.mates[problem.plies as usize / 2] += 1;
                        samples.extend(line);
                    }
                    report.tried = source.tried;
                    report.samples = samples.len();
                    if !samples.is_empty() {
                        let shard = Shard { variant: config.variant, model_id: TSUME_MODEL_ID.into(), samples };
                        // Named by the seed: a rerun (a resumed loop) writes
                        // the same samples under the same names.
                        let name = format!("tsume-{}-{:016x}-{t:02}", config.variant, config.seed);
                        report.shards.push(shard.write(&config.out, &name)?);
                    }
                    Ok(report)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or(Err(SelfPlayError::Panicked("tsume")))).collect()
    });
    let mut total = TsumeReport { mates: vec![0; config.max_plies as usize / 2 + 1], ..Default::default() };
    for r in results {
        let r = r?;
        total.samples += r.samples;
        total.tried += r.tried;
        total.shards.extend(r.shards);
        for (t, n) in total.mates.iter_mut().zip(&r.mates) {
            *t += n;
        }
    }
    Ok(total)
}
