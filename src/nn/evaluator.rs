//! The network as the search's [`Evaluator`]: device choice, the shipped
//! nets, and loading a net with typed errors.

use super::Layout;
use super::device::{DeviceChoice, DeviceError, Precision, describe, device};
use super::model::{Net, NetConfig};
use super::weights::{self, WeightsError};
use crate::mcts::{EvalRequest, Evaluation, Evaluator};
use crate::rules::Variant;
use burn::prelude::*;
use std::time::{Duration, Instant};

/// Which net: one of the variant's shipped nets, or a weight file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ModelSource {
    /// The shipped net for the device: on a GPU the variant's large net
    /// when one is shipped, else (and on the CPU) its small one.
    #[default]
    Shipped,
    /// The variant's small shipped net, on any device.
    ShippedSmall,
    /// The variant's large shipped net, on any device (an error where the
    /// variant has none).
    ShippedLarge,
    File(std::path::PathBuf),
}

impl std::str::FromStr for ModelSource {
    type Err = std::convert::Infallible;
    /// `shipped` (or nothing), `shipped-small` or `shipped-large` for a
    /// shipped net, else a file path.
    fn from_str(s: &str) -> Result<ModelSource, Self::Err> {
        Ok(match s {
            "" | "shipped" => ModelSource::Shipped,
            "shipped-small" => ModelSource::ShippedSmall,
            "shipped-large" => ModelSource::ShippedLarge,
            path => ModelSource::File(path.into()),
        })
    }
}

impl std::fmt::Display for ModelSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ModelSource::Shipped => f.write_str("shipped"),
            ModelSource::ShippedSmall => f.write_str("shipped-small"),
            ModelSource::ShippedLarge => f.write_str("shipped-large"),
            ModelSource::File(p) => write!(f, "{}", p.display()),
        }
    }
}

/// A shipped net's size.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum NetSize {
    /// The CPU default of its variant.
    Small,
    /// A larger net meant for GPUs.
    Large,
}

named_enum!(NetSize, "net size", { Small => "small", Large => "large" });

impl ModelSource {
    /// The shipped net this source names for `variant` on a GPU (`gpu`) or
    /// the CPU, with its size; `None` for a weight file, or for
    /// `shipped-large` where the variant has no large net.
    pub fn shipped_net(&self, variant: Variant, gpu: bool) -> Option<(&'static [u8], NetSize)> {
        let small = (shipped(variant), NetSize::Small);
        let large = shipped_large(variant).map(|bytes| (bytes, NetSize::Large));
        match self {
            ModelSource::Shipped if gpu => large.or(Some(small)),
            ModelSource::Shipped | ModelSource::ShippedSmall => Some(small),
            ModelSource::ShippedLarge => large,
            ModelSource::File(_) => None,
        }
    }
}

/// Why a net cannot be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(transparent)]
    Device(#[from] DeviceError),
    #[error(transparent)]
    Name(#[from] super::UnknownName),
    #[error("shipped net: {0}")]
    Shipped(WeightsError),
    #[error("no large net is shipped for {0}: use shipped or shipped-small")]
    NoLargeNet(Variant),
    #[error("{path}: {source}")]
    File { path: String, source: WeightsError },
}

/// The small weight file shipped for each variant (its CPU default),
/// embedded in the binary.
pub fn shipped(variant: Variant) -> &'static [u8] {
    match variant {
        Variant::Minishogi => include_bytes!("../../models/minishogi.pnet"),
        Variant::Mansindam => include_bytes!("../../models/mansindam.pnet"),
        Variant::Pandemonium => include_bytes!("../../models/pandemonium.pnet"),
        Variant::Pandemonium2022 => include_bytes!("../../models/pandemonium2022.pnet"),
    }
}

/// The batch a net is evaluated in when none is asked for: on a GPU
/// (`gpu`) large enough to keep it busy, on the CPU small enough that the
/// search's virtual losses stay few.
pub fn default_batch(gpu: bool) -> usize {
    if gpu { 256 } else { crate::mcts::DEFAULT_SEARCH_BATCH }
}

/// The variants with a large shipped net (for GPUs) and its weight file,
/// embedded in the binary.
const SHIPPED_LARGE: &[(Variant, &[u8])] = &[];

/// The large weight file shipped for `variant`, where there is one.
pub fn shipped_large(variant: Variant) -> Option<&'static [u8]> {
    SHIPPED_LARGE.iter().find(|(v, _)| *v == variant).map(|&(_, bytes)| bytes)
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
    /// The same net for [`super::cpu`]'s forward pass, on the CPU device
    /// (`None` on a GPU, in f16, or when turned off for a comparison).
    cpu: Option<super::cpu::CpuNet>,
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
    /// Batches in flight at once ([`Evaluator::pipeline_depth`]).
    pipeline_depth: std::sync::atomic::AtomicUsize,
    precision: Precision,
    /// The instructions bf16 products run on ([`super::bf16::Kernel::best`]
    /// unless set for a comparison).
    bf16_kernel: Option<super::bf16::Kernel>,
    clock: parking_lot::Mutex<DeviceClock>,
    name: String,
    /// The CRC-32 its weight file carries, where it was loaded from one.
    weights_crc: Option<u32>,
}

/// When the device had no batch of this evaluator's: the time between one
/// batch's results being read and the next batch's upload, with several
/// batches in flight counted as busy while any is.
#[derive(Debug, Default)]
struct DeviceClock {
    in_flight: usize,
    idle_since: Option<Instant>,
    idle: Duration,
    batches: u64,
}

/// How long the device waited for work: [`NetEvaluator::device_idle`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DeviceIdle {
    pub idle: Duration,
    pub batches: u64,
}

impl DeviceIdle {
    /// The wait per batch.
    pub fn per_batch(&self) -> Duration {
        self.idle.checked_div(self.batches.max(1) as u32).unwrap_or_default()
    }
}

impl NetEvaluator {
    pub fn new(net: Net, config: NetConfig, variant: Variant, device: Device, max_batch: usize, name: String) -> Self {
        let net = net.valid();
        NetEvaluator {
            cpu: (device == Device::flex()).then(|| super::cpu::CpuNet::new(&net, &config, None)),
            net,
            pad: device != Device::flex(),
            policy_kernel: device != Device::flex(),
            sync_stages: false,
            // Two batches in flight keep the GPU busy while the CPU prepares
            // the next; on the CPU they would only compete for the cores.
            pipeline_depth: (if device != Device::flex() { 2 } else { 1 }).into(),
            precision: Precision::F32,
            bf16_kernel: super::bf16::Kernel::best(),
            clock: parking_lot::Mutex::new(DeviceClock::default()),
            device,
            layout: Layout::with_features(variant, config.features),
            config,
            max_batch: max_batch.max(1),
            name,
            weights_crc: None,
        }
    }

    /// The CRC-32 of the weight file the net was loaded from (the one the
    /// file carries): which weights play, shipped or not. `None` for a net
    /// made in memory.
    pub fn weights_crc(&self) -> Option<u32> {
        self.weights_crc
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

    /// Batches in flight at once (at least 1) in searches started from
    /// now; see [`Evaluator::pipeline_depth`].
    pub fn set_pipeline_depth(&self, depth: usize) {
        self.pipeline_depth.store(depth.max(1), std::sync::atomic::Ordering::Relaxed);
    }

    /// Runs the net in `precision` from now on: f16 casts the weights
    /// (and the running statistics of batch norm) on the device; f32 after
    /// f16 is refused, as the cast lost the f32 weights. f16 needs a GPU
    /// whose adapter supports it; bf16 (the 3x3 convolutions' products in
    /// bf16, sums in f32) the CPU device on a CPU with AMX or AVX-512 BF16;
    /// auto is bf16 where it can be, f32 elsewhere.
    pub fn set_precision(&mut self, precision: Precision) -> Result<(), DeviceError> {
        let precision = match precision {
            Precision::Auto if self.device == Device::flex() && self.bf16_kernel.is_some() => Precision::Bf16,
            Precision::Auto => Precision::F32,
            p => p,
        };
        if precision == self.precision {
            return Ok(());
        }
        let cpu = self.device == Device::flex();
        match precision {
            Precision::Bf16 if cpu && self.precision == Precision::F32 && self.bf16_kernel.is_some() => {
                self.cpu = Some(super::cpu::CpuNet::new(&self.net, &self.config, self.bf16_kernel));
            }
            Precision::Bf16 => return Err(DeviceError::NoBf16(describe(&self.device))),
            Precision::F16 if self.precision == Precision::F32 && super::supports_f16(&self.device) => {
                self.net = self.net.clone().map(&mut CastFloats(burn::tensor::FloatDType::F16));
                self.cpu = None;
            }
            Precision::F32 if self.precision == Precision::Bf16 => {
                self.cpu = Some(super::cpu::CpuNet::new(&self.net, &self.config, None));
            }
            _ => return Err(DeviceError::NoHalfPrecision(describe(&self.device))),
        }
        self.precision = precision;
        Ok(())
    }

    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// Whether the forward pass on the CPU is [`super::cpu`]'s (the
    /// default there) or burn's (`false`; for comparisons; burn's is f32
    /// even in bf16). No effect on a GPU or in f16.
    pub fn set_cpu_forward(&mut self, fused: bool) {
        self.cpu = (fused && self.device == Device::flex() && self.precision != Precision::F16)
            .then(|| super::cpu::CpuNet::new(&self.net, &self.config, self.cpu_bf16()));
    }

    /// The bf16 kernel of the CPU forward pass, in bf16.
    fn cpu_bf16(&self) -> Option<super::bf16::Kernel> {
        self.bf16_kernel.filter(|_| self.precision == Precision::Bf16)
    }

    /// Runs bf16 products on `kernel` (for comparisons: the default is the
    /// fastest the CPU has); an error where the CPU lacks it.
    pub fn set_bf16_kernel(&mut self, kernel: super::bf16::Kernel) -> Result<(), DeviceError> {
        if !kernel.available() {
            return Err(DeviceError::NoBf16Kernel(kernel.name()));
        }
        self.bf16_kernel = Some(kernel);
        if self.cpu.is_some() {
            self.cpu = Some(super::cpu::CpuNet::new(&self.net, &self.config, self.cpu_bf16()));
        }
        Ok(())
    }

    pub fn bf16_kernel(&self) -> Option<super::bf16::Kernel> {
        self.cpu_bf16().filter(|_| self.cpu.is_some())
    }

    pub fn cpu_forward(&self) -> bool {
        self.cpu.is_some()
    }

    /// How long the device has waited for this evaluator's batches since
    /// the first one (or the last [`NetEvaluator::reset_device_idle`]).
    pub fn device_idle(&self) -> DeviceIdle {
        let c = self.clock.lock();
        DeviceIdle { idle: c.idle, batches: c.batches }
    }

    pub fn reset_device_idle(&self) {
        *self.clock.lock() = DeviceClock::default();
    }

    fn device_begins(&self) {
        let mut c = self.clock.lock();
        if c.in_flight == 0
            && let Some(since) = c.idle_since.take()
        {
            c.idle += since.elapsed();
        }
        c.in_flight += 1;
        c.batches += 1;
    }

    fn device_ends(&self) {
        let mut c = self.clock.lock();
        c.in_flight = c.in_flight.saturating_sub(1);
        if c.in_flight == 0 {
            c.idle_since = Some(Instant::now());
        }
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

    /// Loads the net of `model` for `variant`, for batches up to
    /// `max_batch` (0: [`default_batch`] for the device).
    pub fn load(
        variant: Variant,
        model: &ModelSource,
        choice: DeviceChoice,
        max_batch: usize,
    ) -> Result<Self, LoadError> {
        let device = device(choice)?;
        let gpu = device != Device::flex();
        let (loaded, crc, name) = match model {
            ModelSource::File(path) => {
                let file_error = |source| LoadError::File { path: path.display().to_string(), source };
                let bytes = weights::read_file(path).map_err(file_error)?;
                let net = weights::load(&bytes, Some(variant), &device).map_err(file_error)?;
                (net, weights::stored_crc(&bytes), path.display().to_string())
            }
            shipped => {
                let (bytes, size) = shipped.shipped_net(variant, gpu).ok_or(LoadError::NoLargeNet(variant))?;
                let net = weights::load(bytes, Some(variant), &device).map_err(LoadError::Shipped)?;
                (net, weights::stored_crc(bytes), format!("shipped {size} {variant} net"))
            }
        };
        let c = &loaded.config;
        let name = format!("{name} ({} blocks x {} channels) on {}", c.blocks, c.channels, describe(&device));
        let max_batch = if max_batch > 0 { max_batch } else { default_batch(gpu) };
        let mut evaluator = NetEvaluator::new(loaded.net, loaded.config, variant, device, max_batch, name);
        evaluator.weights_crc = crc;
        evaluator.warm_up();
        Ok(evaluator)
    }

    pub fn config(&self) -> &NetConfig {
        &self.config
    }

    /// Raw forward pass of `n` encoded positions: policy logits and values.
    pub fn forward_raw(&self, input: Vec<f32>, n: usize) -> (Vec<f32>, Vec<f32>) {
        if let Some(cpu) = &self.cpu {
            return cpu.forward(&input, n);
        }
        let (logits, values) = self.forward(self.upload(input, n));
        (read(logits), read(values))
    }

    /// `n` encoded positions as the net's input tensor on the device.
    fn upload(&self, input: Vec<f32>, n: usize) -> Tensor<4> {
        let l = &self.layout;
        let x = Tensor::<4>::from_data(TensorData::new(input, [n, l.planes, l.height, l.width]), &self.device);
        match self.precision {
            // (`Auto` is resolved by `set_precision`, never held.)
            Precision::F32 | Precision::Bf16 | Precision::Auto => x,
            Precision::F16 => x.cast(burn::tensor::FloatDType::F16),
        }
    }

    /// The forward pass, its outputs in f32 whatever the net computes in.
    fn forward(&self, x: Tensor<4>) -> (Tensor<2>, Tensor<2>) {
        let (logits, values) = self.net.forward(x);
        match self.precision {
            Precision::F32 | Precision::Bf16 | Precision::Auto => (logits, values),
            Precision::F16 => (logits.cast(burn::tensor::FloatDType::F32), values.cast(burn::tensor::FloatDType::F32)),
        }
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
        self.device_begins();
        let (logits, values) = if let Some(cpu) = &self.cpu {
            let started = Instant::now();
            let out = cpu.forward(&input, n);
            t.forward = started.elapsed();
            out
        } else {
            let started = Instant::now();
            let x = self.upload(input, n);
            self.sync();
            t.upload = started.elapsed();
            let started = Instant::now();
            let (logits, values) = self.forward(x);
            self.sync();
            t.forward = started.elapsed();
            if self.policy_kernel
                && let Some(out) = self.policies_on_gpu(batch, n, &logits, &values, &mut t)
            {
                self.device_ends();
                return (out, t);
            }
            let started = Instant::now();
            let out = (read(logits), read(values));
            t.download = started.elapsed();
            out
        };
        self.device_ends();
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

    fn preferred_batch(&self) -> usize {
        self.max_batch
    }

    fn name(&self) -> String {
        let pass = match (self.device == Device::flex(), self.cpu.is_some()) {
            (false, _) => "",
            (true, true) => ", Pantheon's forward pass",
            (true, false) => ", burn's forward pass",
        };
        match (self.precision, self.bf16_kernel()) {
            (Precision::F32, _) => format!("{}{pass}", self.name),
            (Precision::Bf16, Some(kernel)) => format!("{}{pass}, bf16 on {kernel}", self.name),
            (p, _) => format!("{}{pass}, {p}", self.name),
        }
    }

    fn pipeline_depth(&self) -> usize {
        self.pipeline_depth.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// Casts every float tensor of a module (parameters and running
/// statistics) to one type.
struct CastFloats(burn::tensor::FloatDType);

impl burn::module::ModuleMapper for CastFloats {
    fn map_float<const D: usize>(&mut self, param: burn::module::Param<Tensor<D>>) -> burn::module::Param<Tensor<D>> {
        let dtype = self.0;
        param.map(|t| t.cast(dtype))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_net_follows_the_device_and_the_named_size() {
        for v in Variant::ALL {
            let small = Some((shipped(v), NetSize::Small));
            let large = shipped_large(v).map(|bytes| (bytes, NetSize::Large));
            assert_eq!(ModelSource::Shipped.shipped_net(v, false), small, "{v}: the CPU takes the small net");
            assert_eq!(ModelSource::Shipped.shipped_net(v, true), large.or(small), "{v}: a GPU takes the large one");
            assert_eq!(ModelSource::ShippedSmall.shipped_net(v, true), small);
            assert_eq!(ModelSource::ShippedLarge.shipped_net(v, false), large);
            assert_eq!(ModelSource::File("net.pnet".into()).shipped_net(v, true), None);
        }
    }

    #[test]
    fn model_sources_read_back_from_their_names() {
        for name in ["shipped", "shipped-small", "shipped-large", "nets/a b.pnet"] {
            let source: ModelSource = name.parse().unwrap();
            assert_eq!(source.to_string(), name);
        }
        assert_eq!("".parse::<ModelSource>().unwrap(), ModelSource::Shipped);
        assert_eq!("shipped-large".parse::<ModelSource>().unwrap(), ModelSource::ShippedLarge);
    }
}
