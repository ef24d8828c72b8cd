//! What a directory of training records teaches: how many samples of each
//! kind it holds (self-play or teacher games, search policies, teacher
//! labels, tsume), their results, and how the result goes with material;
//! given an evaluator, also how well its value predicts the results and
//! how much it follows material.
//!
//! Material is [`material_balance`] from the side to move's view, in the
//! units of [`material_values`] (a piece's average mobility). Tsume samples
//! (model id [`TSUME_MODEL_ID`]) are counted but kept out of the figures:
//! their values are +1 and -1 by construction.

use super::baselines::{material_balance, material_values};
use super::record::Shard;
use super::tsume::TSUME_MODEL_ID;
use crate::mcts::{EvalRequest, Evaluator};
use crate::rules::{Game, Position};
use std::fmt;

/// Bucket edges of the material balance (the buckets are below the first,
/// between neighbours and above the last).
pub const MATERIAL_EDGES: [f32; 8] = [-15.0, -8.0, -4.0, -1.5, 1.5, 4.0, 8.0, 15.0];

/// The game samples whose material balance is in `[low, high)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Bucket {
    pub low: f32,
    pub high: f32,
    pub samples: usize,
    /// Mean game result from the side to move's view.
    pub mean_result: f64,
    /// Mean of the evaluator's value, when one was given.
    pub mean_value: Option<f64>,
}

/// How an evaluator's value fits the game samples.
#[derive(Clone, Debug, PartialEq)]
pub struct ValueFit {
    pub name: String,
    /// Mean squared error against the game result (the trainer's value loss).
    pub mse: f64,
    /// Correlation of the value with the result and with the material
    /// balance (`None` when either side is constant).
    pub corr_result: Option<f64>,
    pub corr_material: Option<f64>,
}

/// See the module documentation.
#[derive(Clone, Debug, PartialEq)]
pub struct DataStats {
    pub shards: usize,
    pub tsume_samples: usize,
    /// Samples of played games: self-play's or a teacher's (`pantheon label`).
    pub game_samples: usize,
    /// Game samples with a policy target from a full search.
    pub policy_targets: usize,
    /// Game samples with a teacher engine's label.
    pub teacher_labels: usize,
    /// The teacher's lines (MultiPV first moves) over those labels.
    pub teacher_lines: usize,
    /// Game results from the side to move's view (`draws` also counts
    /// games cut off unfinished, value 0).
    pub wins: usize,
    pub draws: usize,
    pub losses: usize,
    pub buckets: Vec<Bucket>,
    pub corr_material_result: Option<f64>,
    pub fit: Option<ValueFit>,
}

/// The figures of `shards`; with `evaluator`, each game sample's position is
/// evaluated too (in batches of its `max_batch`; no fit without game
/// samples).
pub fn data_stats(shards: &[Shard], evaluator: Option<&dyn Evaluator>) -> DataStats {
    let mut stats = DataStats {
        shards: shards.len(),
        tsume_samples: 0,
        game_samples: 0,
        policy_targets: 0,
        teacher_labels: 0,
        teacher_lines: 0,
        wins: 0,
        draws: 0,
        losses: 0,
        buckets: Vec::new(),
        corr_material_result: None,
        fit: None,
    };
    // (position, repetitions, result, material) of every game sample.
    let mut rows: Vec<(&Position, u8, f64, f64)> = Vec::new();
    for shard in shards {
        if shard.model_id == TSUME_MODEL_ID {
            stats.tsume_samples += shard.samples.len();
            continue;
        }
        let values = material_values(shard.variant);
        for s in &shard.samples {
            stats.policy_targets += usize::from(s.full_search && !s.policy.is_empty());
            stats.teacher_labels += usize::from(s.teacher.is_some());
            stats.teacher_lines += s.teacher.as_ref().map_or(0, |t| t.moves.len());
            match s.value {
                v if v > 0.0 => stats.wins += 1,
                v if v < 0.0 => stats.losses += 1,
                _ => stats.draws += 1,
            }
            let material = material_balance(&s.position, &values, s.position.side_to_move());
            rows.push((&s.position, s.repetitions, f64::from(s.value), f64::from(material)));
        }
    }
    stats.game_samples = rows.len();
    let results: Vec<f64> = rows.iter().map(|r| r.2).collect();
    let material: Vec<f64> = rows.iter().map(|r| r.3).collect();
    stats.corr_material_result = correlation(&material, &results);
    let values: Option<Vec<f64>> = evaluator.map(|e| evaluate(e, &rows));
    let mut lows = vec![f32::NEG_INFINITY];
    lows.extend(MATERIAL_EDGES);
    let mut highs = MATERIAL_EDGES.to_vec();
    highs.push(f32::INFINITY);
    for (low, high) in lows.into_iter().zip(highs) {
        let members: Vec<usize> =
            (0..rows.len()).filter(|&i| rows[i].3 >= f64::from(low) && rows[i].3 < f64::from(high)).collect();
        if members.is_empty() {
            continue;
        }
        let mean = |xs: &[f64]| members.iter().map(|&i| xs[i]).sum::<f64>() / members.len() as f64;
        stats.buckets.push(Bucket {
            low,
            high,
            samples: members.len(),
            mean_result: mean(&results),
            mean_value: values.as_deref().map(mean),
        });
    }
    if let (Some(e), Some(values), false) = (evaluator, values, rows.is_empty()) {
        let n = rows.len() as f64;
        stats.fit = Some(ValueFit {
            name: e.name(),
            mse: values.iter().zip(&results).map(|(v, z)| (v - z).powi(2)).sum::<f64>() / n,
            corr_result: correlation(&values, &results),
            corr_material: correlation(&values, &material),
        });
    }
    stats
}

/// The evaluator's value of each row's position (0 where it has no legal
/// move, which records never hold).
fn evaluate(evaluator: &dyn Evaluator, rows: &[(&Position, u8, f64, f64)]) -> Vec<f64> {
    let mut values = vec![0.0; rows.len()];
    let mut batch = Vec::new();
    let mut at = Vec::new();
    for (i, &(position, repetitions, _, _)) in rows.iter().enumerate() {
        let moves: Vec<_> = Game::new(position.clone()).legal_moves().to_vec();
        if !moves.is_empty() {
            batch.push(EvalRequest { position: position.clone(), moves, repetitions });
            at.push(i);
        }
        if batch.len() == evaluator.max_batch().max(1) || (i + 1 == rows.len() && !batch.is_empty()) {
            for (e, &j) in evaluator.evaluate(&batch).iter().zip(&at) {
                values[j] = f64::from(e.value);
            }
            batch.clear();
            at.clear();
        }
    }
    values
}

/// Pearson correlation; `None` for fewer than two points or a constant
/// side (a variance that is only rounding error counts as constant).
pub fn correlation(xs: &[f64], ys: &[f64]) -> Option<f64> {
    let n = xs.len().min(ys.len());
    if n < 2 {
        return None;
    }
    let (mx, my) = (xs[..n].iter().sum::<f64>() / n as f64, ys[..n].iter().sum::<f64>() / n as f64);
    let (mut cov, mut vx, mut vy) = (0.0, 0.0, 0.0);
    for (x, y) in xs.iter().zip(ys) {
        cov += (x - mx) * (y - my);
        vx += (x - mx).powi(2);
        vy += (y - my).powi(2);
    }
    let flat = |v: f64, m: f64| v <= 1e-12 * n as f64 * m.abs().max(1.0).powi(2);
    (!flat(vx, mx) && !flat(vy, my)).then(|| cov / (vx * vy).sqrt())
}

impl fmt::Display for DataStats {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let corr = |c: Option<f64>| c.map_or("-".to_string(), |c| format!("{c:+.3}"));
        let share = |k: usize| 100.0 * k as f64 / self.game_samples.max(1) as f64;
        writeln!(
            f,
            "{} shards: {} game samples ({} with a search policy target, {} with a teacher label{}), {} tsume samples",
            self.shards,
            self.game_samples,
            self.policy_targets,
            self.teacher_labels,
            if self.teacher_labels > 0 {
                format!(", {:.2} lines each", self.teacher_lines as f64 / self.teacher_labels as f64)
            } else {
                String::new()
            },
            self.tsume_samples
        )?;
        if self.game_samples == 0 {
            return writeln!(f, "no game samples: nothing to relate results to");
        }
        writeln!(
            f,
            "results for the side to move: win {:.1}%, draw or unfinished {:.1}%, loss {:.1}%",
            share(self.wins),
            share(self.draws),
            share(self.losses)
        )?;
        writeln!(f, "correlation of material balance and result: {}", corr(self.corr_material_result))?;
        let net = self.fit.is_some();
        writeln!(
            f,
            "{:>16} {:>8} {:>7} {:>12}{}",
            "material",
            "samples",
            "share",
            "mean result",
            if net { "   mean value" } else { "" }
        )?;
        for b in &self.buckets {
            let range = match (b.low.is_finite(), b.high.is_finite()) {
                (false, _) => format!("< {}", b.high),
                (_, false) => format!(">= {}", b.low),
                _ => format!("{} .. {}", b.low, b.high),
            };
            write!(f, "{range:>16} {:>8} {:>6.1}% {:>+12.3}", b.samples, share(b.samples), b.mean_result)?;
            match b.mean_value {
                Some(v) => writeln!(f, " {v:>+12.3}")?,
                None => writeln!(f)?,
            }
        }
        if let Some(fit) = &self.fit {
            writeln!(
                f,
                "{}: value loss (mean squared error) {:.4}, correlation with result {}, with material {}",
                fit.name,
                fit.mse,
                corr(fit.corr_result),
                corr(fit.corr_material)
            )?;
        }
        Ok(())
    }
}
