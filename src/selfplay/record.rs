//! Training records: one sample per searched position, written in shards.
//!
//! Shard file (all integers little-endian):
//! ```text
//! "PNTHSHRD"                 magic
//! u32 version                SHARD_VERSION
//! u16 + bytes                variant name
//! u16 + bytes                model id (which net played)
//! u32 samples, then each sample:
//!   u16 + bytes              SFEN of the position
//!   u8 repetitions           occurrences so far (1 = first)
//!   f32 value                game result from the side to move's view (-1, 0, 1)
//!   u8 flags                 bit 0: the policy target is from a full search
//!                            bit 1: a teacher label follows the policy
//!                            bit 2: the search's root value follows
//!                            bit 3: an improved policy follows
//!   u16 n, n x (u16 move, u32 visits)   sparse policy target (CompactMove bits)
//!   teacher label (version 2, when flag bit 1 is set):
//!     score                  the teacher's score of the position
//!     u8 n, n x (u16 move, score)   its MultiPV first moves, best first
//!   where a score is u8 kind (0 cp, 1 mate in plies) + i32
//!   f32 root value           (version 3, flag bit 2) the search's value of
//!                            the position, side to move's view
//!   n x u16 improved policy  (version 3, flag bit 3) Gumbel's improved
//!                            policy, or the pruned visits' shares, per move
//!                            of the policy target, in its order, as a
//!                            share of 65535
//! u32 crc32                  of everything before it
//! ```
//! Version 1 (no teacher labels) and 2 shards (no search targets) are
//! still read.
//! A shard is written under a temporary name and renamed when complete, so
//! readers (the trainer, other machines on a shared filesystem) never see
//! a half-written one; a damaged shard fails its checksum and is skipped.

use crate::mcts::Score;
use crate::notation::{parse_position, to_sfen};
use crate::rules::{CompactMove, Move, Position, Variant};
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"PNTHSHRD";
/// The shard format this build reads and writes.
pub const SHARD_VERSION: u32 = 3;
/// The oldest shard format this build still reads.
pub const OLDEST_SHARD_VERSION: u32 = 1;
/// File name ending of complete shards.
pub const SHARD_EXTENSION: &str = "shard";

/// One training position.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub position: Position,
    pub repetitions: u8,
    /// Final result from the side to move's view: 1 win, -1 loss, 0 draw
    /// or unfinished.
    pub value: f32,
    /// Whether `policy` comes from a full search (playout-cap
    /// randomisation: only those train the policy).
    pub full_search: bool,
    /// Visits per root move.
    pub policy: Vec<(Move, u32)>,
    /// A teacher engine's verdict on the position, when it was labelled.
    pub teacher: Option<TeacherLabel>,
    /// What the search said beyond its visits (self-play records).
    pub search: Option<SearchTargets>,
}

/// A self-play search's own targets beside its visit counts.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchTargets {
    /// The root's value after the search, from the side to move's view.
    pub value: f32,
    /// The policy target the search proposes beyond its raw visits, per
    /// move of the sample's `policy`, in its order: Gumbel's improved
    /// policy, or the visits after policy target pruning (forced
    /// playouts); empty with neither.
    pub improved: Vec<f32>,
}

/// What a teacher engine said of a position (`pantheon label`).
#[derive(Clone, Debug, PartialEq)]
pub struct TeacherLabel {
    /// The teacher's score of the position, from the side to move's view.
    pub score: Score,
    /// Its MultiPV first moves with their scores, best first; only moves
    /// legal under Pantheon's rules.
    pub moves: Vec<(Move, Score)>,
}

/// A shard's contents.
#[derive(Clone, Debug, PartialEq)]
pub struct Shard {
    pub variant: Variant,
    pub model_id: String,
    pub samples: Vec<Sample>,
}

/// Why a shard cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    #[error("cannot read {0}: {1}")]
    Io(String, std::io::Error),
    #[error("not a Pantheon shard (bad magic)")]
    BadMagic,
    #[error("shard format version {0}; this build reads versions {OLDEST_SHARD_VERSION} to {SHARD_VERSION}")]
    Version(u32),
    #[error("shard is truncated")]
    Truncated,
    #[error("shard is corrupt: checksum mismatch")]
    Checksum,
    #[error("shard holds a bad entry: {0}")]
    Bad(String),
}

/// Why self-play (or tsume sample making) failed.
#[derive(Debug, thiserror::Error)]
pub enum SelfPlayError {
    #[error("cannot create {path}: {source}")]
    Create { path: String, source: std::io::Error },
    #[error(transparent)]
    Shard(#[from] ShardError),
    #[error("mate length must be odd, got {0} plies")]
    EvenMateLength(u32),
    #[error("a {0} thread panicked")]
    Panicked(&'static str),
    /// A player had no move in a game that is not over (a bug).
    #[error("{0} found no move in an unfinished game")]
    NoMove(&'static str),
}

/// Creates `dir` (and its parents) for records.
pub fn create_dir(dir: &Path) -> Result<(), SelfPlayError> {
    std::fs::create_dir_all(dir).map_err(|source| SelfPlayError::Create { path: dir.display().to_string(), source })
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    let bytes = &s.as_bytes()[..s.len().min(u16::MAX as usize)];
    out.extend_from_slice(&(bytes.len() as u16).to_le_bytes());
    out.extend_from_slice(bytes);
}

fn put_score(out: &mut Vec<u8>, score: Score) {
    let (kind, value) = match score {
        Score::Cp(cp) => (0u8, cp),
        Score::Mate(plies) => (1u8, plies),
    };
    out.push(kind);
    out.extend_from_slice(&value.to_le_bytes());
}

impl Shard {
    /// The shard as bytes, checksum included.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&SHARD_VERSION.to_le_bytes());
        put_str(&mut out, self.variant.name());
        put_str(&mut out, &self.model_id);
        out.extend_from_slice(&(self.samples.len() as u32).to_le_bytes());
        for s in &self.samples {
            put_str(&mut out, &to_sfen(&s.position));
            out.push(s.repetitions);
            out.extend_from_slice(&s.value.to_le_bytes());
            let improved =
                s.search.as_ref().is_some_and(|t| t.improved.len() == s.policy.len() && !s.policy.is_empty());
            out.push(
                s.full_search as u8
                    | (s.teacher.is_some() as u8) << 1
                    | (s.search.is_some() as u8) << 2
                    | (improved as u8) << 3,
            );
            out.extend_from_slice(&(s.policy.len() as u16).to_le_bytes());
            for &(m, n) in &s.policy {
                out.extend_from_slice(&CompactMove::from(m).bits().to_le_bytes());
                out.extend_from_slice(&n.to_le_bytes());
            }
            if let Some(t) = &s.teacher {
                put_score(&mut out, t.score);
                let n = t.moves.len().min(u8::MAX as usize);
                out.push(n as u8);
                for &(m, score) in &t.moves[..n] {
                    out.extend_from_slice(&CompactMove::from(m).bits().to_le_bytes());
                    put_score(&mut out, score);
                }
            }
            if let Some(t) = &s.search {
                out.extend_from_slice(&t.value.to_le_bytes());
                if improved {
                    for &p in &t.improved {
                        out.extend_from_slice(&((p.clamp(0.0, 1.0) * 65535.0).round() as u16).to_le_bytes());
                    }
                }
            }
        }
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    /// Parses and checks a shard.
    pub fn from_bytes(bytes: &[u8]) -> Result<Shard, ShardError> {
        if bytes.len() < 8 || &bytes[..8] != MAGIC {
            return Err(if bytes.len() < 8 { ShardError::Truncated } else { ShardError::BadMagic });
        }
        if bytes.len() < 16 {
            return Err(ShardError::Truncated);
        }
        let (body, crc) = bytes.split_at(bytes.len() - 4);
        let mut r = Reader { bytes: body, at: 8 };
        let version = r.u32()?;
        if !(OLDEST_SHARD_VERSION..=SHARD_VERSION).contains(&version) {
            return Err(ShardError::Version(version));
        }
        if crc32fast::hash(body) != u32::from_le_bytes(crc.try_into().expect("4 bytes")) {
            return Err(ShardError::Checksum);
        }
        let variant: Variant = r.string()?.parse().map_err(|e| ShardError::Bad(format!("{e}")))?;
        let model_id = r.string()?;
        let count = r.u32()? as usize;
        let mut samples = Vec::with_capacity(count.min(1 << 20));
        for _ in 0..count {
            let sfen = r.string()?;
            let position = parse_position(variant, &sfen).map_err(|e| ShardError::Bad(format!("{sfen}: {e}")))?;
            let repetitions = r.u8()?;
            let value = f32::from_le_bytes(r.take(4)?.try_into().expect("4 bytes"));
            let flags = r.u8()?;
            let full_search = flags & 1 != 0;
            let n = r.u16()? as usize;
            let legal = position.legal_moves();
            let legal_move = |bits: u16| {
                CompactMove::from_bits(bits)
                    .map(Move::from)
                    .filter(|m| legal.contains(m))
                    .ok_or_else(|| ShardError::Bad(format!("move {bits:#06x} is not legal in {sfen}")))
            };
            let mut policy = Vec::with_capacity(n);
            for _ in 0..n {
                let bits = r.u16()?;
                let visits = r.u32()?;
                policy.push((legal_move(bits)?, visits));
            }
            let teacher = if version >= 2 && flags & 2 != 0 {
                let score = r.score()?;
                let n = r.u8()? as usize;
                let mut moves = Vec::with_capacity(n);
                for _ in 0..n {
                    let bits = r.u16()?;
                    moves.push((legal_move(bits)?, r.score()?));
                }
                Some(TeacherLabel { score, moves })
            } else {
                None
            };
            let search = if version >= 3 && flags & 4 != 0 {
                let value = f32::from_le_bytes(r.take(4)?.try_into().expect("4 bytes"));
                let mut improved = Vec::new();
                if flags & 8 != 0 {
                    for _ in 0..policy.len() {
                        improved.push(f32::from(r.u16()?) / 65535.0);
                    }
                }
                Some(SearchTargets { value, improved })
            } else {
                None
            };
            samples.push(Sample { position, repetitions, value, full_search, policy, teacher, search });
        }
        if r.at != body.len() {
            return Err(ShardError::Bad("trailing bytes".into()));
        }
        Ok(Shard { variant, model_id, samples })
    }

    /// Writes the shard into `dir` under `name` (plus the shard extension),
    /// through a temporary file renamed when complete. Returns the path.
    pub fn write(&self, dir: &Path, name: &str) -> Result<PathBuf, ShardError> {
        let path = dir.join(format!("{name}.{SHARD_EXTENSION}"));
        crate::atomic_file::write(&path, &self.to_bytes())
            .map_err(|e| ShardError::Io(path.display().to_string(), e))?;
        Ok(path)
    }

    pub fn read(path: &Path) -> Result<Shard, ShardError> {
        let bytes = std::fs::read(path).map_err(|e| ShardError::Io(path.display().to_string(), e))?;
        Shard::from_bytes(&bytes)
    }
}

/// Reads every complete shard of `variant` in `dir` up to `max_samples`
/// samples: the newest shards (by modification time) are chosen, then
/// ordered by file name, so that the same files give the same samples in
/// the same order whenever they were written (a resumed run's training
/// sees what an uninterrupted one sees). Damaged shards (and shards of
/// other variants) are skipped with a warning each.
pub fn read_dir(dir: &Path, variant: Variant, max_samples: usize) -> Result<(Vec<Sample>, Vec<String>), ShardError> {
    let (mut shards, warnings) = newest_shards(dir, variant, max_samples)?;
    // Trim the oldest shard chosen to the window, then order by name.
    let total: usize = shards.iter().map(|(_, s)| s.samples.len()).sum();
    if let Some((_, last)) = shards.last_mut() {
        let keep = last.samples.len().saturating_sub(total.saturating_sub(max_samples));
        last.samples.truncate(keep);
    }
    shards.sort_by(|a, b| a.0.cmp(&b.0));
    Ok((shards.into_iter().flat_map(|(_, s)| s.samples).collect(), warnings))
}

/// The newest shards of `variant` in `dir` until they hold at least
/// `max_samples` samples (the last one whole), newest first.
pub fn read_shards(dir: &Path, variant: Variant, max_samples: usize) -> Result<(Vec<Shard>, Vec<String>), ShardError> {
    let (shards, warnings) = newest_shards(dir, variant, max_samples)?;
    Ok((shards.into_iter().map(|(_, s)| s).collect(), warnings))
}

/// A shard and the file it came from.
type NamedShard = (PathBuf, Shard);

fn newest_shards(
    dir: &Path,
    variant: Variant,
    max_samples: usize,
) -> Result<(Vec<NamedShard>, Vec<String>), ShardError> {
    let entries = std::fs::read_dir(dir).map_err(|e| ShardError::Io(dir.display().to_string(), e))?;
    let mut paths: Vec<(std::time::SystemTime, PathBuf)> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == SHARD_EXTENSION))
        .map(|p| (std::fs::metadata(&p).and_then(|m| m.modified()).unwrap_or(std::time::UNIX_EPOCH), p))
        .collect();
    paths.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
    let (mut shards, mut warnings, mut samples) = (Vec::new(), Vec::new(), 0);
    for (_, path) in paths {
        if samples >= max_samples {
            break;
        }
        match Shard::read(&path) {
            Ok(s) if s.variant == variant => {
                samples += s.samples.len();
                shards.push((path, s));
            }
            Ok(s) => warnings.push(format!("skipped {}: it is for {}", path.display(), s.variant)),
            Err(e) => warnings.push(format!("skipped {}: {e}", path.display())),
        }
    }
    Ok((shards, warnings))
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], ShardError> {
        let s = self.bytes.get(self.at..self.at + n).ok_or(ShardError::Truncated)?;
        self.at += n;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, ShardError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, ShardError> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().expect("2 bytes")))
    }
    fn u32(&mut self) -> Result<u32, ShardError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    fn score(&mut self) -> Result<Score, ShardError> {
        let kind = self.u8()?;
        let value = self.u32()? as i32;
        match kind {
            0 => Ok(Score::Cp(value)),
            1 => Ok(Score::Mate(value)),
            k => Err(ShardError::Bad(format!("score kind {k}"))),
        }
    }
    fn string(&mut self) -> Result<String, ShardError> {
        let n = self.u16()? as usize;
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| ShardError::Bad("text is not UTF-8".into()))
    }
}
