//! The engine's USI options: the table `usi` prints and the values
//! `setoption` changes, checked against their ranges.

use crate::mcts::{ENGINE_ROOT_MATE_PLIES, MATE_PLIES, POLICY_TEMPERATURE};
use crate::rules::Variant;

/// A USI option's type, default and range.
#[derive(Clone, Debug)]
pub enum Kind {
    Check(bool),
    Spin { default: i64, min: i64, max: i64 },
    Combo { default: &'static str, vars: &'static [&'static str] },
    Str(&'static str),
}

pub struct Spec {
    pub name: &'static str,
    pub kind: Kind,
}

pub const VARIANTS: &[&str] = &["minishogi", "mansindam", "pandemonium", "pandemonium2022"];
pub const DEVICES: &[&str] = &["auto", "gpu", "cpu"];
pub const PRECISIONS: &[&str] = &["auto", "f32", "bf16", "f16"];

/// Every option, in the order `usi` lists them.
pub const SPECS: &[Spec] = &[
    Spec { name: "USI_Variant", kind: Kind::Combo { default: "minishogi", vars: VARIANTS } },
    Spec { name: "USI_Hash", kind: Kind::Spin { default: 256, min: 1, max: 65536 } },
    Spec { name: "Threads", kind: Kind::Spin { default: 0, min: 0, max: 256 } },
    Spec { name: "MultiPV", kind: Kind::Spin { default: 1, min: 1, max: 500 } },
    Spec { name: "USI_Ponder", kind: Kind::Check(false) },
    Spec { name: "ModelFile", kind: Kind::Str("") },
    Spec { name: "Device", kind: Kind::Combo { default: "auto", vars: DEVICES } },
    Spec { name: "Precision", kind: Kind::Combo { default: "auto", vars: PRECISIONS } },
    Spec { name: "BatchSize", kind: Kind::Spin { default: 0, min: 0, max: 4096 } },
    Spec { name: "ByoyomiMargin", kind: Kind::Spin { default: 100, min: 0, max: 60_000 } },
    Spec { name: "ResignThreshold", kind: Kind::Spin { default: 0, min: 0, max: 100_000 } },
    Spec { name: "MatePlies", kind: Kind::Spin { default: MATE_PLIES as i64, min: 0, max: 9 } },
    Spec { name: "RootMatePlies", kind: Kind::Spin { default: ENGINE_ROOT_MATE_PLIES as i64, min: 0, max: 31 } },
    Spec {
        name: "PolicyTemperature",
        kind: Kind::Spin { default: (POLICY_TEMPERATURE * 100.0).round() as i64, min: 10, max: 1000 },
    },
    Spec { name: "CPuct", kind: Kind::Spin { default: 0, min: 0, max: 1000 } },
];

/// Current option values.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    pub variant: Variant,
    pub hash_mib: usize,
    /// Search worker threads (0: one per core).
    pub threads: usize,
    pub multipv: usize,
    pub ponder: bool,
    /// Empty or `shipped`: the variant's shipped net for the device (the
    /// large one on a GPU where there is one); `shipped-small`,
    /// `shipped-large`, or a weight file.
    pub model_file: String,
    /// `auto`, `gpu` or `cpu`.
    pub device: String,
    /// The net's number format: `auto` (bf16 on a CPU that multiplies
    /// bf16 matrices, else f32), `f32`, `bf16` (CPU with AMX or AVX-512
    /// BF16) or `f16` (GPU).
    pub precision: String,
    /// Positions per network call (0: the evaluator's preferred batch,
    /// a net's that of its device, see `Evaluator::preferred_batch`).
    pub batch_size: usize,
    /// Milliseconds kept in hand from the clock.
    pub byoyomi_margin_ms: u64,
    /// Resign when the score is below minus this many centipawns (0: only
    /// when the loss is proven).
    pub resign_cp: i64,
    /// Longest mate looked for at each leaf, in plies (0: none).
    pub mate_plies: u32,
    /// Longest mate looked for at the root by its own thread (0: none).
    pub root_mate_plies: u32,
    /// Temperature of the network's priors (the option is in hundredths).
    pub policy_temperature: f64,
    /// The PUCT exploration constant c_init (the option is in hundredths;
    /// None, the option's 0: the variant's, [`crate::mcts::engine_cpuct`]).
    pub cpuct: Option<f64>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            variant: Variant::Minishogi,
            hash_mib: 256,
            threads: 0,
            multipv: 1,
            ponder: false,
            model_file: String::new(),
            device: "auto".into(),
            precision: "auto".into(),
            batch_size: 0,
            byoyomi_margin_ms: 100,
            resign_cp: 0,
            mate_plies: MATE_PLIES,
            root_mate_plies: ENGINE_ROOT_MATE_PLIES,
            policy_temperature: POLICY_TEMPERATURE,
            cpuct: None,
        }
    }
}

/// Why a `setoption` was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OptionError {
    #[error("unknown option '{0}'")]
    Unknown(String),
    #[error("option '{0}' needs a value")]
    MissingValue(String),
    #[error("option '{name}': '{value}' is not a whole number")]
    NotANumber { name: String, value: String },
    #[error("option '{name}': {value} is out of range {min}..={max}")]
    OutOfRange { name: String, value: i64, min: i64, max: i64 },
    #[error("option '{name}': '{value}' is not one of {allowed}")]
    NotAllowed { name: String, value: String, allowed: String },
}

/// The `option ...` lines of the `usi` answer.
pub fn usi_lines() -> Vec<String> {
    SPECS
        .iter()
        .map(|s| match &s.kind {
            Kind::Check(d) => format!("option name {} type check default {d}", s.name),
            Kind::Spin { default, min, max } => {
                format!("option name {} type spin default {default} min {min} max {max}", s.name)
            }
            Kind::Combo { default, vars } => {
                let vars: String = vars.iter().map(|v| format!(" var {v}")).collect();
                format!("option name {} type combo default {default}{vars}", s.name)
            }
            Kind::Str(d) => {
                let d = if d.is_empty() { "<empty>" } else { d };
                format!("option name {} type string default {d}", s.name)
            }
        })
        .collect()
}

impl Options {
    /// Sets option `name` (case-insensitive; `UCI_Variant` and `Hash` are
    /// accepted as aliases) to `value`.
    pub fn set(&mut self, name: &str, value: Option<&str>) -> Result<(), OptionError> {
        let canonical = match name.to_ascii_lowercase().as_str() {
            "uci_variant" => "USI_Variant",
            "hash" => "USI_Hash",
            lower => SPECS
                .iter()
                .find(|s| s.name.eq_ignore_ascii_case(lower))
                .map(|s| s.name)
                .ok_or_else(|| OptionError::Unknown(name.to_string()))?,
        };
        let spec = SPECS.iter().find(|s| s.name == canonical).expect("canonical name");
        let raw = value.map(str::trim).unwrap_or("");
        if raw.is_empty() && !matches!(spec.kind, Kind::Str(_)) {
            return Err(OptionError::MissingValue(canonical.to_string()));
        }
        match &spec.kind {
            Kind::Check(_) => {
                let v = match raw.to_ascii_lowercase().as_str() {
                    "true" => true,
                    "false" => false,
                    _ => {
                        return Err(OptionError::NotAllowed {
                            name: canonical.into(),
                            value: raw.into(),
                            allowed: "true, false".into(),
                        });
                    }
                };
                self.ponder = v;
            }
            Kind::Spin { min, max, .. } => {
                let v: i64 =
                    raw.parse().map_err(|_| OptionError::NotANumber { name: canonical.into(), value: raw.into() })?;
                if v < *min || v > *max {
                    return Err(OptionError::OutOfRange { name: canonical.into(), value: v, min: *min, max: *max });
                }
                match canonical {
                    "USI_Hash" => self.hash_mib = v as usize,
                    "Threads" => self.threads = v as usize,
                    "MultiPV" => self.multipv = v as usize,
                    "BatchSize" => self.batch_size = v as usize,
                    "ByoyomiMargin" => self.byoyomi_margin_ms = v as u64,
                    "ResignThreshold" => self.resign_cp = v,
                    "MatePlies" => self.mate_plies = v as u32,
                    "RootMatePlies" => self.root_mate_plies = v as u32,
                    "PolicyTemperature" => self.policy_temperature = v as f64 / 100.0,
                    // 0: the variant's value; any other from 10 (0.1, as
                    // `--cpuct`) up.
                    "CPuct" if (1..10).contains(&v) => {
                        return Err(OptionError::OutOfRange { name: canonical.into(), value: v, min: 10, max: *max });
                    }
                    "CPuct" => self.cpuct = (v > 0).then(|| v as f64 / 100.0),
                    _ => unreachable!("every spin option is handled"),
                }
            }
            Kind::Combo { vars, .. } => {
                let Some(&v) = vars.iter().find(|v| v.eq_ignore_ascii_case(raw)) else {
                    return Err(OptionError::NotAllowed {
                        name: canonical.into(),
                        value: raw.into(),
                        allowed: vars.join(", "),
                    });
                };
                match canonical {
                    "USI_Variant" => self.variant = v.parse().expect("listed variants parse"),
                    "Device" => self.device = v.to_string(),
                    "Precision" => self.precision = v.to_string(),
                    _ => unreachable!("every combo option is handled"),
                }
            }
            Kind::Str(_) => {
                let v = if raw == "<empty>" { "" } else { raw };
                self.model_file = v.to_string();
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_and_checks_options() {
        let mut o = Options::default();
        o.set("UCI_Variant", Some("mansindam")).unwrap();
        assert_eq!(o.variant, Variant::Mansindam);
        o.set("threads", Some("4")).unwrap();
        assert_eq!(o.threads, 4);
        assert!(matches!(o.set("Threads", Some("257")), Err(OptionError::OutOfRange { .. })));
        assert!(matches!(o.set("Threads", Some("many")), Err(OptionError::NotANumber { .. })));
        assert!(matches!(o.set("USI_Variant", Some("chess")), Err(OptionError::NotAllowed { .. })));
        assert!(matches!(o.set("Colour", Some("red")), Err(OptionError::Unknown(_))));
        assert!(matches!(o.set("MultiPV", None), Err(OptionError::MissingValue(_))));
        o.set("ModelFile", Some("nets/a b.bin")).unwrap();
        assert_eq!(o.model_file, "nets/a b.bin");
        o.set("ModelFile", Some("<empty>")).unwrap();
        assert_eq!(o.model_file, "");
        assert_eq!(o.threads, 4, "a refused value changes nothing");
        assert_eq!(o.policy_temperature, POLICY_TEMPERATURE);
        o.set("PolicyTemperature", Some("100")).unwrap();
        assert_eq!(o.policy_temperature, 1.0, "the option is in hundredths");
        assert!(matches!(o.set("PolicyTemperature", Some("5")), Err(OptionError::OutOfRange { .. })));
        assert_eq!(o.cpuct, None);
        o.set("cpuct", Some("200")).unwrap();
        assert_eq!(o.cpuct, Some(2.0), "the option is in hundredths");
        o.set("CPuct", Some("0")).unwrap();
        assert_eq!(o.cpuct, None, "0: the variant's value");
        assert!(matches!(o.set("CPuct", Some("1001")), Err(OptionError::OutOfRange { .. })));
        assert!(matches!(o.set("CPuct", Some("9")), Err(OptionError::OutOfRange { min: 10, .. })));
        assert_eq!(o.cpuct, None, "a refused value changes nothing");
        assert!(matches!(o.set("CPuct", Some("2.0")), Err(OptionError::NotANumber { .. })));
        assert_eq!(usi_lines().len(), SPECS.len());
    }
}
