//! Weight files: a small header (format version, variant, [`NetConfig`])
//! and burn's record of the weights, with a CRC-32 over everything.
//!
//! ```text
//! "PANTHEON"          8 bytes magic
//! version             u32 LE (FORMAT_VERSION)
//! header length       u32 LE, then that many bytes of "key value" lines
//! record length       u64 LE, then burn's ModuleRecord bytes (f32 weights)
//! crc32               u32 LE of all bytes before it
//! ```
//! Files are written to a temporary name and renamed, so a crash never
//! leaves a half-written file under the real name.

use super::Layout;
use super::encode::Features;
use super::model::{Net, NetConfig};
use crate::rules::Variant;
use burn::prelude::*;
use burn::store::ModuleRecord;
use burn::tensor::Bytes;
use std::path::Path;

const MAGIC: &[u8; 8] = b"PANTHEON";
/// The weight-file format this build reads and writes.
pub const FORMAT_VERSION: u32 = 1;

/// Why a weight file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum WeightsError {
    #[error("cannot read {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("cannot write {path}: {source}")]
    Write { path: String, source: std::io::Error },
    #[error("not a Pantheon weight file (bad magic)")]
    BadMagic,
    #[error("weight file format version {found}; this build reads version {FORMAT_VERSION}")]
    Version { found: u32 },
    #[error("weight file is truncated ({0})")]
    Truncated(&'static str),
    #[error("weight file is corrupt: checksum mismatch")]
    Checksum,
    #[error("weight file header: {0}")]
    Header(String),
    #[error("this net is for {found}, not {wanted}")]
    WrongVariant { found: Variant, wanted: Variant },
    #[error("the net's encoding ({found}) does not match this build's for {variant} ({expected})")]
    Layout { variant: Variant, found: String, expected: String },
    #[error(
        "a net grows, never shrinks: it has {blocks} blocks x {channels} channels, asked for {to_blocks} x {to_channels}"
    )]
    Shrink { blocks: usize, channels: usize, to_blocks: usize, to_channels: usize },
    #[error("weights do not fit the net described in the header: {0}")]
    Record(String),
}

/// A net with the variant it plays and its size.
#[derive(Debug)]
pub struct LoadedNet {
    pub variant: Variant,
    pub config: NetConfig,
    pub net: Net,
}

fn header_text(variant: Variant, c: &NetConfig) -> String {
    let mut text = format!(
        "variant {}\nblocks {}\nchannels {}\nvalue_channels {}\nvalue_hidden {}\nplanes {}\ntypes {}\nheight {}\nwidth {}\n",
        variant, c.blocks, c.channels, c.value_channels, c.value_hidden, c.planes, c.types, c.height, c.width
    );
    // Files of base-feature nets stay as they were before features existed.
    if c.features != Features::Base {
        text.push_str(&format!("features {}\n", c.features));
    }
    if c.material_head {
        text.push_str("material_head 1\n");
    }
    if c.reply_head {
        text.push_str("reply_head 1\n");
    }
    text
}

fn parse_header(text: &str) -> Result<(Variant, NetConfig), WeightsError> {
    let bad = |m: String| WeightsError::Header(m);
    let mut fields = std::collections::HashMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let (k, v) = line.split_once(' ').ok_or_else(|| bad(format!("bad line '{line}'")))?;
        fields.insert(k, v.trim());
    }
    let get = |k: &str| fields.get(k).copied().ok_or_else(|| bad(format!("missing '{k}'")));
    let num = |k: &str| -> Result<usize, WeightsError> {
        let v = get(k)?;
        v.parse().ok().filter(|&n| n > 0 && n <= 1 << 20).ok_or_else(|| bad(format!("bad {k} '{v}'")))
    };
    let flag = |k: &str| match fields.get(k) {
        None | Some(&"0") => Ok(false),
        Some(&"1") => Ok(true),
        Some(v) => Err(bad(format!("bad {k} '{v}'"))),
    };
    let variant: Variant = get("variant")?.parse().map_err(|e| bad(format!("{e}")))?;
    let config = NetConfig {
        blocks: get("blocks")?.parse().map_err(|_| bad("bad blocks".into()))?,
        channels: num("channels")?,
        value_channels: num("value_channels")?,
        value_hidden: num("value_hidden")?,
        features: match fields.get("features") {
            Some(f) => f.parse().map_err(|e: super::UnknownName| bad(e.to_string()))?,
            None => Features::Base,
        },
        planes: num("planes")?,
        types: num("types")?,
        height: num("height")?,
        width: num("width")?,
        material_head: flag("material_head")?,
        reply_head: flag("reply_head")?,
    };
    if config.blocks > 256 {
        return Err(bad(format!("{} blocks", config.blocks)));
    }
    Ok((variant, config))
}

/// The bytes of a weight file for `net`.
pub fn to_bytes(variant: Variant, config: &NetConfig, net: &Net) -> Result<Vec<u8>, WeightsError> {
    let record =
        net.valid().numbered().into_record().into_bytes().map_err(|e| WeightsError::Record(format!("{e:?}")))?;
    let header = header_text(variant, config);
    let mut out = Vec::with_capacity(record.len() + header.len() + 32);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(header.len() as u32).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(&(record.len() as u64).to_le_bytes());
    out.extend_from_slice(&record);
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    Ok(out)
}

/// Writes a freshly initialised net of `config` (random weights drawn
/// from `seed`) to `path`: the starting point of training.
pub fn save_initial(path: &Path, variant: Variant, config: &NetConfig, seed: u64) -> Result<(), WeightsError> {
    save(path, variant, config, &config.init_seeded(&Device::flex(), seed))
}

/// A base-feature net turned into one that reads the attack planes too
/// ([`Net::with_extra_planes`]): it plays exactly as before until trained
/// further. `None` when the net already reads them.
pub fn with_attack_planes(loaded: LoadedNet) -> Option<LoadedNet> {
    if loaded.config.features != Features::Base {
        return None;
    }
    let layout = Layout::with_features(loaded.variant, Features::Attacks);
    let config = NetConfig { features: Features::Attacks, planes: layout.planes, ..loaded.config };
    let net = loaded.net.with_extra_planes(layout.planes - loaded.config.planes);
    Some(LoadedNet { variant: loaded.variant, config, net })
}

/// [`with_attack_planes`] from weight file to weight file; returns the new
/// net's config.
pub fn add_attack_planes(input: &Path, out: &Path) -> Result<NetConfig, WeightsError> {
    let loaded = load_file(input, None, &Device::flex())?;
    let widened = with_attack_planes(loaded)
        .ok_or_else(|| WeightsError::Header(format!("{} already reads the attack planes", input.display())))?;
    save(out, widened.variant, &widened.config, &widened.net)?;
    Ok(widened.config)
}

/// A net grown to `blocks` and `channels` ([`Net::grown`]), its new
/// weights drawn from `seed`: it computes exactly what it did until
/// trained further.
pub fn grown(loaded: LoadedNet, blocks: usize, channels: usize, seed: u64) -> Result<LoadedNet, WeightsError> {
    let from = loaded.config;
    if blocks < from.blocks || channels < from.channels {
        let (to_blocks, to_channels) = (blocks, channels);
        return Err(WeightsError::Shrink { blocks: from.blocks, channels: from.channels, to_blocks, to_channels });
    }
    let config = NetConfig { blocks, channels, ..from };
    let net = loaded.net.grown(config.init_seeded(&Device::flex(), seed));
    Ok(LoadedNet { variant: loaded.variant, config, net })
}

/// [`grown`] from weight file to weight file; returns the new net's config.
pub fn grow(input: &Path, out: &Path, blocks: usize, channels: usize, seed: u64) -> Result<NetConfig, WeightsError> {
    let grown = grown(load_file(input, None, &Device::flex())?, blocks, channels, seed)?;
    save(out, grown.variant, &grown.config, &grown.net)?;
    Ok(grown.config)
}

/// Writes a weight file atomically (temporary file, then rename).
pub fn save(path: &Path, variant: Variant, config: &NetConfig, net: &Net) -> Result<(), WeightsError> {
    let bytes = to_bytes(variant, config, net)?;
    crate::atomic_file::write(path, &bytes)
        .map_err(|source| WeightsError::Write { path: path.display().to_string(), source })
}

/// Checks a weight file's framing and returns its variant, config and
/// record bytes.
pub fn parse(bytes: &[u8]) -> Result<(Variant, NetConfig, &[u8]), WeightsError> {
    if bytes.len() < 8 || &bytes[..8] != MAGIC {
        return Err(if bytes.len() < 8 && MAGIC.starts_with(bytes) {
            WeightsError::Truncated("magic")
        } else {
            WeightsError::BadMagic
        });
    }
    let take = |at: usize, n: usize, what: &'static str| {
        at.checked_add(n).and_then(|end| bytes.get(at..end)).ok_or(WeightsError::Truncated(what))
    };
    let version = u32::from_le_bytes(take(8, 4, "version")?.try_into().expect("4 bytes"));
    if version != FORMAT_VERSION {
        return Err(WeightsError::Version { found: version });
    }
    let header_len = u32::from_le_bytes(take(12, 4, "header length")?.try_into().expect("4 bytes")) as usize;
    let header = take(16, header_len, "header")?;
    let at = 16 + header_len;
    let record_len = u64::from_le_bytes(take(at, 8, "record length")?.try_into().expect("8 bytes"));
    let record_len = usize::try_from(record_len).map_err(|_| WeightsError::Truncated("record"))?;
    let record = take(at + 8, record_len, "record")?;
    let end = at + 8 + record.len();
    let crc = u32::from_le_bytes(take(end, 4, "checksum")?.try_into().expect("4 bytes"));
    if bytes.len() != end + 4 {
        return Err(WeightsError::Header(format!("{} trailing bytes", bytes.len() - end - 4)));
    }
    if crc32fast::hash(&bytes[..end]) != crc {
        return Err(WeightsError::Checksum);
    }
    let text = std::str::from_utf8(header).map_err(|_| WeightsError::Header("not UTF-8".into()))?;
    let (variant, config) = parse_header(text)?;
    Ok((variant, config, record))
}

/// The CRC-32 a weight file carries in its last four bytes, for bytes
/// that [`load`] or [`parse`] accepted (which checked it).
pub fn stored_crc(bytes: &[u8]) -> Option<u32> {
    bytes.last_chunk::<4>().map(|tail| u32::from_le_bytes(*tail))
}

/// Loads a net from weight-file bytes onto `device`, checking that it is
/// for `wanted` (if given) and matches this build's encoding.
pub fn load(bytes: &[u8], wanted: Option<Variant>, device: &Device) -> Result<LoadedNet, WeightsError> {
    let (variant, config, record) = parse(bytes)?;
    if let Some(w) = wanted
        && w != variant
    {
        return Err(WeightsError::WrongVariant { found: variant, wanted: w });
    }
    let layout = Layout::with_features(variant, config.features);
    let expected = (layout.planes, layout.types, layout.height, layout.width);
    let found = (config.planes, config.types, config.height, config.width);
    if expected != found {
        let show = |(p, t, h, w): (usize, usize, usize, usize)| format!("{p} planes, {t} move types, {h}x{w}");
        return Err(WeightsError::Layout { variant, found: show(found), expected: show(expected) });
    }
    let record = ModuleRecord::from_bytes(Bytes::from_bytes_vec(record.to_vec()))
        .map_err(|e| WeightsError::Record(format!("{e:?}")))?;
    let net = config.init(device).try_load_record(record).map_err(|e| WeightsError::Record(format!("{e:?}")))?;
    Ok(LoadedNet { variant, config, net: net.numbered() })
}

/// Loads a weight file from disk.
pub fn load_file(path: &Path, wanted: Option<Variant>, device: &Device) -> Result<LoadedNet, WeightsError> {
    load(&read_file(path)?, wanted, device)
}

/// A weight file's bytes, unchecked.
pub fn read_file(path: &Path) -> Result<Vec<u8>, WeightsError> {
    std::fs::read(path).map_err(|source| WeightsError::Read { path: path.display().to_string(), source })
}
