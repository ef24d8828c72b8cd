//! `pantheon net`: weight files made, converted and described.

use super::*;

#[derive(Subcommand, Debug)]
pub enum NetCommand {
    /// Write a randomly initialised net (the starting point of training).
    Init {
        #[arg(long)]
        variant: Variant,
        /// Residual blocks.
        #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(0..=64))]
        blocks: u64,
        /// Trunk channels.
        #[arg(long, default_value_t = 48, value_parser = clap::value_parser!(u64).range(1..=1024))]
        channels: u64,
        /// Seed of the random weights.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Input features: base (pieces, hands, repetitions, side) or
        /// attacks (base plus attacker counts per square for both sides).
        #[arg(long, default_value_t = crate::nn::Features::Base)]
        features: crate::nn::Features,
        #[arg(long)]
        out: std::path::PathBuf,
    },
    /// Print a weight file's variant, size and encoding.
    Info { path: std::path::PathBuf },
    /// Make a base-feature net read the attack planes too: their weights
    /// start at zero, so it plays as before until trained further.
    AddAttackPlanes {
        #[arg(long = "in")]
        input: std::path::PathBuf,
        #[arg(long)]
        out: std::path::PathBuf,
    },
    /// Grow a net to more blocks or channels without changing what it
    /// computes (new channels are read with zero weights, new residual
    /// blocks start as the identity), so training a larger net starts from
    /// a trained smaller one.
    Grow {
        #[arg(long = "in")]
        input: std::path::PathBuf,
        /// Residual blocks of the grown net (at least the net's own).
        #[arg(long, value_parser = clap::value_parser!(u64).range(0..=64))]
        blocks: u64,
        /// Trunk channels of the grown net (at least the net's own).
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
        channels: u64,
        /// Seed of the new weights.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long)]
        out: std::path::PathBuf,
    },
}

impl NetCommand {
    pub fn run(self) -> Result<()> {
        match self {
            NetCommand::Init { variant, blocks, channels, seed, features, out } => {
                net_init(variant, (blocks as usize, channels as usize), features, seed, &out)
            }
            NetCommand::Info { path } => net_info(&path),
            NetCommand::AddAttackPlanes { input, out } => net_add_attack_planes(&input, &out),
            NetCommand::Grow { input, blocks, channels, seed, out } => {
                let config = crate::nn::weights::grow(&input, &out, blocks as usize, channels as usize, seed)?;
                print_written(&out, &config);
                Ok(())
            }
        }
    }
}

fn net_init(
    variant: Variant,
    (blocks, channels): (usize, usize),
    features: crate::nn::Features,
    seed: u64,
    out: &std::path::Path,
) -> Result<()> {
    use crate::nn::{Layout, NetConfig};
    let config = NetConfig::new(&Layout::with_features(variant, features), blocks, channels);
    crate::nn::weights::save_initial(out, variant, &config, seed)?;
    print_written(out, &config);
    Ok(())
}

/// The line `net init` and `net grow` print for the net they wrote.
fn print_written(out: &std::path::Path, config: &crate::nn::NetConfig) {
    outln!(
        "wrote {} ({} parameters, {} blocks x {} channels)",
        out.display(),
        config.parameters(),
        config.blocks,
        config.channels
    );
}

fn net_add_attack_planes(input: &std::path::Path, out: &std::path::Path) -> Result<()> {
    let config = crate::nn::weights::add_attack_planes(input, out)?;
    outln!("wrote {} ({} input planes)", out.display(), config.planes);
    Ok(())
}

fn net_info(path: &std::path::Path) -> Result<()> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let (variant, c, record) = crate::nn::weights::parse(&bytes)?;
    outln!("variant: {variant}");
    outln!(
        "blocks: {}, channels: {}, value head: {} channels, {} hidden",
        c.blocks,
        c.channels,
        c.value_channels,
        c.value_hidden
    );
    outln!("encoding: {} features, {} planes, {} move types, {}x{}", c.features, c.planes, c.types, c.height, c.width);
    outln!("parameters: {}", c.parameters());
    outln!("weights: {} bytes", record.len());
    Ok(())
}
