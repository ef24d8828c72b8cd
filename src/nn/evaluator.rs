//! The network as the search's [`Evaluator`]: device choice, the shipped
//! nets, and loading a net with typed errors.

use super::Layout;
use super::model::{Net, NetConfig};
use super::weights::{self, WeightsError};
use crate::mcts::{EvalRequest, Evaluation, Evaluator};
use crate::rules::Variant;
use burn::prelude::*;
use std::time::{Duration, Instant};

/// Where the network runs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DeviceChoice {
    /// The GPU if one is usable, else the CPU.
    Auto,
    Gpu,
    Cpu,
}

impl std::str::FromStr for DeviceChoice {
    type Err = DeviceError;
    fn from_str(s: &str) -> Result<DeviceChoice, DeviceError> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(DeviceChoice::Auto),
            "gpu" => Ok(DeviceChoice::Gpu),
            "cpu" => Ok(DeviceChoice::Cpu),
            _ => Err(DeviceError::Unknown(s.to_string())),
        }
    }
}

impl std::fmt::Display for DeviceChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DeviceChoice::Auto => "auto",
            DeviceChoice::Gpu => "gpu",
            DeviceChoice::Cpu => "cpu",
        })
    }
}

/// Why a device cannot be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeviceError {
    #[error("unknown device '{0}' (expected auto, gpu or cpu)")]
    Unknown(String),
    #[error("this build has no GPU backend (build with the gpu feature); use Device cpu or auto")]
    NoGpuBackend,
    #[error("no usable GPU adapter: {0}")]
    NoAdapter(String),
}

/// Which net: the variant's shipped one, or a weight file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ModelSource {
    #[default]
    Shipped,
    File(std::path::PathBuf),
}

impl std::str::FromStr for ModelSource {
    type Err = std::convert::Infallible;
    /// `shipped` (or nothing) for the shipped net, else a file path.
    fn from_str(s: &str) -> Result<ModelSource, Self::Err> {
        Ok(match s {
            "" | "shipped" => ModelSource::Shipped,
            path => ModelSource::File(path.into()),
        })
    }
}

impl std::fmt::Display for ModelSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ModelSource::Shipped => f.write_str("shipped"),
            ModelSource::File(p) => write!(f, "{}", p.display()),
        }
    }
}

/// Why a net cannot be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(transparent)]
    Device(#[from] DeviceError),
    #[error("shipped net: {0}")]
    Shipped(WeightsError),
    #[error("{path}: {source}")]
    File { path: String, source: WeightsError },
}

/// The burn device for a choice: `cpu` is burn's flex backend; `gpu` the
/// wgpu backend (any adapter, software ones included); `auto` the GPU when
/// a real one is present, else the CPU.
pub fn device(choice: DeviceChoice) -> Result<Device, DeviceError> {
    match choice {
        DeviceChoice::Cpu => Ok(Device::flex()),
        DeviceChoice::Gpu => gpu_device(),
        DeviceChoice::Auto if has_real_gpu() => gpu_device().or_else(|_| Ok(Device::flex())),
        DeviceChoice::Auto => Ok(Device::flex()),
    }
}

/// Whether the machine has a physical GPU that wgpu can use.
#[cfg(feature = "gpu")]
pub fn has_real_gpu() -> bool {
    !Device::enumerate_physical().is_empty()
}

#[cfg(not(feature = "gpu"))]
pub fn has_real_gpu() -> bool {
    false
}

/// The process's wgpu device, made once (burn's wgpu runtime cannot be
/// initialised twice); the error is remembered too.
#[cfg(feature = "gpu")]
fn gpu_device() -> Result<Device, DeviceError> {
    use burn::tensor::DeviceKind;
    static GPU: std::sync::OnceLock<Result<Device, DeviceError>> = std::sync::OnceLock::new();
    GPU.get_or_init(|| {
        Device::wgpu_options()
            .device_kind(DeviceKind::DefaultDevice)
            .init()
            .map_err(|e| DeviceError::NoAdapter(e.to_string()))
    })
    .clone()
}

#[cfg(not(feature = "gpu"))]
fn gpu_device() -> Result<Device, DeviceError> {
    Err(DeviceError::NoGpuBackend)
}

/// What a device is, for `info string` and benchmark output: the CPU
/// backend, or the GPU adapter's name, graphics API, kind and driver.
pub fn describe(device: &Device) -> String {
    if *device == Device::flex() {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        return format!("cpu (burn flex backend, {threads} threads)");
    }
    describe_gpu(device)
}

#[cfg(feature = "gpu")]
fn describe_gpu(device: &Device) -> String {
    use burn::tensor::wgpu::wgpu;
    let Some(name) = device.identity().map(|i| i.name) else {
        return "gpu (wgpu, adapter unnamed)".to_string();
    };
    // burn names the adapter; wgpu's own list says through what.
    let descriptor = wgpu::InstanceDescriptor {
        backends: wgpu::Backends::PRIMARY,
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    };
    let instance = wgpu::Instance::new(descriptor);
    let adapters = futures_lite::future::block_on(instance.enumerate_adapters(wgpu::Backends::PRIMARY));
    match adapters.iter().map(|a| a.get_info()).find(|i| i.name == name) {
        Some(i) => {
            let driver = format!("{} {}", i.driver, i.driver_info);
            let driver = driver.trim();
            let driver = if driver.is_empty() { "unnamed" } else { driver };
            format!("gpu: {} ({:?}, {:?}, driver {driver})", i.name, i.backend, i.device_type)
        }
        None => format!("gpu: {name} (wgpu)"),
    }
}

#[cfg(not(feature = "gpu"))]
fn describe_gpu(_device: &Device) -> String {
    "gpu".to_string()
}

/// The weight file shipped for each variant, embedded in the binary.
pub fn shipped(variant: Variant) -> &'static [u8] {
    match variant {
        Variant::Minishogi => include_bytes!("../../models/minishogi.pnet"),
        Variant::Mansindam => include_bytes!("../../models/mansindam.pnet"),
        Variant::Pandemonium => include_bytes!("../../models/pandemonium.pnet"),
        Variant::Pandemonium2022 => include_bytes!("../../models/pandemonium2022.pnet"),
    }
}

/// Time spent in each stage of [`NetEvaluator::evaluate_timed`].
#[derive(Clone, Debug, Default)]
pub struct Timings {
    pub encode: Duration,
    pub upload: Duration,
    pub forward: Duration,
    pub download: Duration,
    /// Legal-move gathering and softmax on the CPU.
    pub policy: Duration,
}

/// A loaded net on a device, evaluating batches of positions.
///
/// On the GPU every batch is padded with empty rows to the next of a few
/// fixed sizes ([`NetEvaluator::batch_sizes`]): burn's wgpu kernels are
/// autotuned per shape, and [`NetEvaluator::warm_up`] (run by `load`) pays
/// for that at start rather than in the first searches. The CPU backend
/// does not autotune and runs the exact batch.
pub struct NetEvaluator {
    net: Net,
    device: Device,
    layout: Layout,
    config: NetConfig,
    max_batch: usize,
    pad: bool,
    /// Gather and normalise the legal moves' logits with the WGSL kernel
    /// (GPU only).
    policy_kernel: bool,
    /// Wait for the device after the upload and the forward pass, so that
    /// [`Timings`] split GPU time by stage (benchmarks only: the GPU runs
    /// asynchronously and would otherwise charge everything to the read).
    sync_stages: bool,
    name: String,
}

impl NetEvaluator {
    pub fn new(net: Net, config: NetConfig, variant: Variant, device: Device, max_batch: usize, name: String) -> Self {
        NetEvaluator {
            net: net.valid(),
            pad: device != Device::flex(),
            policy_kernel: device != Device::flex(),
            sync_stages: false,
            device,
            layout: Layout::with_features(variant, config.features),
            config,
            max_batch: max_batch.max(1),
            name,
        }
    }

    /// Whether the policy softmax runs in the WGSL kernel
    /// (`shaders/masked_softmax.wgsl`); on by default on the GPU, where the
    /// alternative is reading back every logit. No effect on the CPU.
    pub fn set_policy_kernel(&mut self, on: bool) {
        self.policy_kernel = on && self.device != Device::flex();
    }

    pub fn policy_kernel(&self) -> bool {
        self.policy_kernel
    }

    /// See the `sync_stages` field; for `bench nn`.
    pub fn set_stage_timing(&mut self, on: bool) {
        self.sync_stages = on;
    }

    fn sync(&self) {
        if self.sync_stages && self.pad {
            // An error here shows up again, with its cause, at the read.
            let _ = self.device.sync();
        }
    }

    /// The batch sizes a GPU batch is padded to: 1, then powers of two
    /// from 8 up to the first one that holds `max_batch`.
    pub fn batch_sizes(&self) -> Vec<usize> {
        let mut sizes = vec![1];
        let mut b = 8;
        loop {
            sizes.push(b);
            if b >= self.max_batch {
                return sizes;
            }
            b *= 2;
        }
    }

    /// The size a batch of `n` positions runs at.
    pub fn padded(&self, n: usize) -> usize {
        if !self.pad {
            return n;
        }
        self.batch_sizes().into_iter().find(|&b| b >= n).unwrap_or(n)
    }

    /// One forward pass at every padded batch size, so that kernel
    /// compilation and autotuning happen now (GPU only; a no-op on the CPU).
    pub fn warm_up(&self) {
        if !self.pad {
            return;
        }
        for b in self.batch_sizes() {
            self.forward_raw(vec![0.0; b * self.layout.input_len()], b);
        }
    }

    /// Loads the net of `model` for `variant`.
    pub fn load(
        variant: Variant,
        model: &ModelSource,
        choice: DeviceChoice,
        max_batch: usize,
    ) -> Result<Self, LoadError> {
        let device = device(choice)?;
        let (loaded, name) = match model {
            ModelSource::Shipped => {
                let net = weights::load(shipped(variant), Some(variant), &device).map_err(LoadError::Shipped)?;
                (net, format!("shipped {variant} net"))
            }
            ModelSource::File(path) => {
                let net = weights::load_file(path, Some(variant), &device)
                    .map_err(|source| LoadError::File { path: path.display().to_string(), source })?;
                (net, path.display().to_string())
            }
        };
        let c = &loaded.config;
        let name = format!("{name} ({} blocks x {} channels) on {}", c.blocks, c.channels, describe(&device));
        let evaluator = NetEvaluator::new(loaded.net, loaded.config, variant, device, max_batch, name);
        evaluator.warm_up();
        Ok(evaluator)
    }

    pub fn config(&self) -> &NetConfig {
        &self.config
    }

    /// Raw forward pass of `n` encoded positions: policy logits and values.
    pub fn forward_raw(&self, input: Vec<f32>, n: usize) -> (Vec<f32>, Vec<f32>) {
        let l = &self.layout;
        let x = Tensor::<4>::from_data(TensorData::new(input, [n, l.planes, l.height, l.width]), &self.device);
        let (logits, values) = self.net.forward(x);
        (read(logits), read(values))
    }

    /// [`Evaluator::evaluate`] with the time of each stage.
    pub fn evaluate_timed(&self, batch: &[EvalRequest]) -> (Vec<Evaluation>, Timings) {
        let mut t = Timings::default();
        let l = &self.layout;
        let n = self.padded(batch.len());
        let len = l.input_len();
        let started = Instant::now();
        // Padding rows stay zero; their outputs are ignored.
        let mut input = vec![0.0f32; n * len];
        for (req, chunk) in batch.iter().zip(input.chunks_mut(len)) {
            l.encode(&req.position, req.repetitions, chunk);
        }
        t.encode = started.elapsed();
        let started = Instant::now();
        let x = Tensor::<4>::from_data(TensorData::new(input, [n, l.planes, l.height, l.width]), &self.device);
        self.sync();
        t.upload = started.elapsed();
        let started = Instant::now();
        let (logits, values) = self.net.forward(x);
        self.sync();
        t.forward = started.elapsed();
        if self.policy_kernel
            && let Some(out) = self.policies_on_gpu(batch, n, &logits, &values, &mut t)
        {
            return (out, t);
        }
        let started = Instant::now();
        let (logits, values) = (read(logits), read(values));
        t.download = started.elapsed();
        let started = Instant::now();
        let p = l.policy_len();
        let out = batch
            .iter()
            .enumerate()
            .map(|(i, req)| {
                let row = &logits[i * p..(i + 1) * p];
                let picked: Vec<f32> = req.moves.iter().map(|&m| row[l.index(&req.position, m)]).collect();
                Evaluation { value: values[i], policy: softmax(&picked) }
            })
            .collect();
        t.policy = started.elapsed();
        (out, t)
    }
}

impl NetEvaluator {
    /// The evaluations with the policy softmax done by the WGSL kernel on
    /// the device; `None` (use the CPU path) without the `gpu` feature, off
    /// a wgpu device, or if the kernel fails (reported once).
    fn policies_on_gpu(
        &self,
        batch: &[EvalRequest],
        padded: usize,
        logits: &Tensor<2>,
        values: &Tensor<2>,
        t: &mut Timings,
    ) -> Option<Vec<Evaluation>> {
        #[cfg(feature = "gpu")]
        {
            let started = Instant::now();
            let mut moves = Vec::new();
            let mut offsets = Vec::with_capacity(padded + 1);
            offsets.push(0u32);
            for req in batch {
                moves.extend(req.moves.iter().map(|&m| self.layout.index(&req.position, m) as u32));
                offsets.push(moves.len() as u32);
            }
            // Padding rows have no moves.
            offsets.resize(padded + 1, moves.len() as u32);
            t.policy = started.elapsed();
            let started = Instant::now();
            let probs = match super::kernels::masked_softmax(logits.clone(), &moves, &offsets)? {
                Ok(p) => p,
                Err(e) => {
                    static REPORTED: std::sync::Once = std::sync::Once::new();
                    REPORTED.call_once(|| eprintln!("{e}; using the CPU softmax"));
                    return None;
                }
            };
            let values = read(values.clone());
            t.download = started.elapsed();
            let out = (0..batch.len())
                .map(|i| Evaluation {
                    value: values[i],
                    policy: probs[offsets[i] as usize..offsets[i + 1] as usize].to_vec(),
                })
                .collect();
            Some(out)
        }
        #[cfg(not(feature = "gpu"))]
        {
            let _ = (batch, padded, logits, values, t);
            None
        }
    }
}

fn read<const D: usize>(t: Tensor<D>) -> Vec<f32> {
    t.try_into_vec_as::<f32>().expect("network output reads back as f32")
}

/// Softmax over the legal moves' logits (the masked policy).
pub fn softmax(logits: &[f32]) -> Vec<f32> {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let exp: Vec<f32> = logits.iter().map(|&x| (x - max).exp()).collect();
    let sum: f32 = exp.iter().sum();
    exp.into_iter().map(|e| e / sum).collect()
}

impl Evaluator for NetEvaluator {
    fn evaluate(&self, batch: &[EvalRequest]) -> Vec<Evaluation> {
        self.evaluate_timed(batch).0
    }

    fn max_batch(&self) -> usize {
        self.max_batch
    }

    fn name(&self) -> String {
        self.name.clone()
    }
}
