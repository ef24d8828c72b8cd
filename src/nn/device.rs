//! Devices: where the network runs (burn's flex backend on the CPU, or
//! burn's wgpu backend on a GPU), what a device is, and what it can do.

use burn::prelude::*;

/// Where the network runs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DeviceChoice {
    /// The GPU if one is usable, else the CPU.
    Auto,
    Gpu,
    Cpu,
}

named_enum!(DeviceChoice, "device", { Auto => "auto", Gpu => "gpu", Cpu => "cpu" });

/// Why a device cannot be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeviceError {
    #[error("this build has no GPU backend (build with the gpu feature); use Device cpu or auto")]
    NoGpuBackend,
    #[error("no usable GPU adapter: {0}")]
    NoAdapter(String),
    #[error("f16 needs a GPU whose adapter supports it; this device: {0}")]
    NoHalfPrecision(String),
    #[error("bf16 needs the CPU device on a CPU with AMX or AVX-512 BF16; this device: {0}")]
    NoBf16(String),
    #[error("this CPU (or OS) has no {0} bf16 kernel")]
    NoBf16Kernel(&'static str),
    #[error("the throughput probe failed: {0}")]
    Probe(String),
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
        return format!("cpu (burn flex backend, {} threads)", crate::mcts::cores());
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

/// The number format of the net's weights and activations on the device.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Precision {
    #[default]
    F32,
    /// Half precision (GPU only, where the adapter supports it); inputs
    /// and outputs stay f32 on the host.
    F16,
    /// bfloat16 products with f32 sums in the 3x3 convolutions (the CPU
    /// device, on CPUs with AMX or AVX-512 BF16).
    Bf16,
    /// bf16 on the CPU device where the CPU multiplies bf16 matrices
    /// (AMX or AVX-512 BF16), f32 elsewhere: a request, which
    /// [`super::NetEvaluator::set_precision`] resolves.
    Auto,
}

named_enum!(Precision, "precision", { F32 => "f32", F16 => "f16", Bf16 => "bf16", Auto => "auto" });

/// Whether the device computes in f16 (a GPU whose adapter supports it).
pub fn supports_f16(device: &Device) -> bool {
    *device != Device::flex() && device.supports_dtype(burn::tensor::FloatDType::F16)
}

/// The device's peak arithmetic rate in FLOP/s for each precision, as
/// cubecl's throughput probe measures it (chains of fused multiply-adds
/// at two FLOPs each); the error says why a precision has none.
#[cfg(feature = "gpu")]
pub fn peak_flops(device: &Device) -> Vec<(Precision, Result<f64, DeviceError>)> {
    use burn::cubecl::ir::{ElemType, FloatKind};
    use burn::tensor::{ThroughputKey, ThroughputMode};
    if *device == Device::flex() {
        return Vec::new();
    }
    let kinds = [(Precision::F32, FloatKind::F32), (Precision::F16, FloatKind::F16)];
    let keys: Vec<ThroughputKey> = kinds
        .iter()
        .map(|&(_, kind)| ThroughputKey { mode: ThroughputMode::ComputeDirect { dtype: ElemType::Float(kind) } })
        .collect();
    let stats = device.performance_stats(&keys);
    kinds
        .iter()
        .zip(stats)
        .map(|(&(p, _), stat)| (p, stat.value.map(|v| v.ops_per_s()).map_err(|e| DeviceError::Probe(e.to_string()))))
        .collect()
}

#[cfg(not(feature = "gpu"))]
pub fn peak_flops(_device: &Device) -> Vec<(Precision, Result<f64, DeviceError>)> {
    Vec::new()
}
