//! Hand-written WGSL kernels on burn's wgpu device (feature `gpu`).
//!
//! `masked_softmax` runs `shaders/masked_softmax.wgsl` on the policy
//! logits where the net left them: the legal moves' logits are gathered
//! and normalised on the GPU and only their probabilities are read back.
//! It launches on the calling thread's stream, the one burn's own kernels
//! use, so it runs after the forward pass without an extra sync.

use burn::Tensor;
use burn::backend::Cube;
use burn::backend::wgpu::{KernelSource, SourceKernel, SourceTemplate, into_contiguous};
use burn::cubecl::prelude::KernelId;
use burn::cubecl::server::KernelArguments;
use burn::cubecl::{CubeCount, CubeDim, bytes::Bytes};

struct MaskedSoftmax;

impl KernelSource for MaskedSoftmax {
    fn source(&self) -> SourceTemplate {
        SourceTemplate::new(include_str!("../../shaders/masked_softmax.wgsl"))
    }

    fn id(&self) -> KernelId {
        KernelId::new::<Self>()
    }

    fn lang(&self) -> &'static str {
        "wgsl"
    }
}

const WORKGROUP: u32 = 64;

/// Softmax over each row's legal moves: `moves[offsets[b]..offsets[b + 1]]`
/// are row `b`'s policy indices; the result has one probability per entry
/// of `moves`. `None` when `logits` is not on a wgpu device (the caller
/// then uses the CPU path); `Some(Err)` when the kernel failed.
pub fn masked_softmax(logits: Tensor<2>, moves: &[u32], offsets: &[u32]) -> Option<Result<Vec<f32>, String>> {
    let [batch, policy_len] = logits.dims();
    let total = offsets.last().map_or(0, |&t| t as usize);
    if offsets.len() != batch + 1 || total != moves.len() {
        return Some(Err(format!(
            "masked softmax: {} offsets and {} moves for {batch} rows",
            offsets.len(),
            moves.len()
        )));
    }
    let tensor = into_contiguous(logits.try_into_primitive::<Cube>().ok()?);
    if tensor.dtype != burn::tensor::DType::F32 {
        return Some(Err(format!("masked softmax: logits are {:?}, the kernel reads f32", tensor.dtype)));
    }
    if total == 0 {
        return Some(Ok(Vec::new()));
    }
    let client = tensor.client.clone();
    let mut header = Vec::with_capacity(batch + 3);
    header.extend_from_slice(&[batch as u32, policy_len as u32]);
    header.extend_from_slice(offsets);
    let header = client.create(Bytes::from_elems(header));
    let moves = client.create(Bytes::from_elems(moves.to_vec()));
    let probs = client.empty(total * 4);
    client.launch(
        Box::new(SourceKernel::new(MaskedSoftmax, CubeDim::new_1d(WORKGROUP))),
        CubeCount::Static((batch as u32).div_ceil(WORKGROUP), 1, 1),
        KernelArguments::new()
            .with_buffer(tensor.handle.clone().binding())
            .with_buffer(header.binding())
            .with_buffer(moves.binding())
            .with_buffer(probs.clone().binding()),
    );
    Some(match client.read_one(probs) {
        Ok(bytes) => {
            Ok(bytes[..total * 4].chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
        }
        Err(e) => Err(format!("masked softmax kernel failed: {e:?}")),
    })
}
