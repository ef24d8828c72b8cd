//! The net's forward pass on the CPU without burn: the same arithmetic
//! with batch norm folded into the convolutions, activations kept
//! channels-last, each 3x3 convolution an im2col tile times a weight
//! matrix (the `gemm` crate's AVX-512/AVX2 kernels) with its bias, residual
//! and ReLU applied in one pass over the result, and the batch split
//! between threads that each run their positions through the whole net.
//!
//! burn's CPU backend runs each layer as its own operation: a layout
//! change to channels-last and back per convolution, then batch norm, the
//! ReLU and the residual sum as separate passes, each allocating. For the
//! small nets played on CPUs those passes cost about as much as the
//! convolutions' arithmetic. Play uses this path on the CPU; training keeps
//! burn's (it needs autodiff), and tests check that both give the same
//! outputs.

use super::bf16;
use super::model::{Net, NetConfig};
use burn::nn::conv::Conv2d;
use burn::nn::{BatchNorm, Linear};
use burn::prelude::*;

/// Rows (board squares of the chunk's positions) per im2col tile: a tile
/// of a 48-channel 3x3 convolution is 256 x 432 floats, 442 KB, which
/// stays in a core's L2 cache with the weights.
const TILE_ROWS: usize = 256;

/// A convolution (3x3 with zero padding, or 1x1) with batch norm folded
/// in: `weights` is `[k * k * inputs, outputs]` row-major, the rows in
/// (ky, kx, input channel) order.
#[derive(Clone, Debug)]
struct Conv {
    k: usize,
    inputs: usize,
    outputs: usize,
    weights: Vec<f32>,
    bias: Vec<f32>,
    /// The weights as bf16 pairs when this convolution runs in bf16.
    packed: Option<Packed>,
}

/// A convolution's weights for a bf16 kernel: `[pairs, outputs]` pairs,
/// `pairs` the kernel's for `k * k * inputs` (zero rows past them).
#[derive(Clone, Debug)]
struct Packed {
    kernel: bf16::Kernel,
    pairs: usize,
    weights: Vec<u32>,
}

/// A fully connected layer: `weights` is `[inputs, outputs]` row-major.
#[derive(Clone, Debug)]
struct Dense {
    inputs: usize,
    outputs: usize,
    weights: Vec<f32>,
    bias: Vec<f32>,
}

/// A net's weights laid out for [`CpuNet::forward`].
#[derive(Clone, Debug)]
pub struct CpuNet {
    /// Threads a batch is split between at most: the CPU's cores (asked
    /// once; the query reads the cgroup's limits each time).
    threads: usize,
    height: usize,
    width: usize,
    planes: usize,
    stem: Conv,
    blocks: Vec<[Conv; 2]>,
    policy: Conv,
    policy_out: Conv,
    value: Conv,
    value_fc: Dense,
    value_out: Dense,
}

fn values<const D: usize>(t: Tensor<D>) -> Vec<f32> {
    t.try_into_vec_as::<f32>().expect("weights read back as f32")
}

/// Folds `bn` (when given) into `conv`.
fn fold(conv: &Conv2d, bn: Option<&BatchNorm>) -> Conv {
    let [outputs, inputs, k, _] = conv.weight.val().dims();
    let w = values(conv.weight.val());
    let bias = conv.bias.as_ref().map_or(vec![0.0; outputs], |b| values(b.val()));
    let (scale, shift): (Vec<f32>, Vec<f32>) = match bn {
        Some(bn) => {
            let gamma = values(bn.gamma.val());
            let beta = values(bn.beta.val());
            let mean = values(bn.running_mean.value());
            let var = values(bn.running_var.value());
            (0..outputs)
                .map(|o| {
                    let s = gamma[o] / (var[o] + bn.epsilon as f32).sqrt();
                    (s, beta[o] - mean[o] * s)
                })
                .unzip()
        }
        None => (vec![1.0; outputs], vec![0.0; outputs]),
    };
    let mut weights = vec![0.0; k * k * inputs * outputs];
    for o in 0..outputs {
        for i in 0..inputs {
            for ky in 0..k {
                for kx in 0..k {
                    let row = (ky * k + kx) * inputs + i;
                    weights[row * outputs + o] = w[((o * inputs + i) * k + ky) * k + kx] * scale[o];
                }
            }
        }
    }
    let bias = (0..outputs).map(|o| bias[o] * scale[o] + shift[o]).collect();
    Conv { k, inputs, outputs, weights, bias, packed: None }
}

fn dense(linear: &Linear) -> Dense {
    let [inputs, outputs] = linear.weight.val().dims();
    Dense {
        inputs,
        outputs,
        weights: values(linear.weight.val()),
        bias: linear.bias.as_ref().map_or(vec![0.0; outputs], |b| values(b.val())),
    }
}

/// `dst[m x n] = lhs[m x k] * rhs[k x n]`, all row-major and contiguous,
/// on the calling thread.
fn matmul(dst: &mut [f32], lhs: &[f32], rhs: &[f32], m: usize, k: usize, n: usize) {
    assert!(dst.len() >= m * n && lhs.len() >= m * k && rhs.len() >= k * n);
    // SAFETY: the three buffers hold the m x n, m x k and k x n row-major
    // matrices the strides describe (checked above), and dst does not
    // alias the inputs (it is a distinct &mut).
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            n as isize,
            false,
            lhs.as_ptr(),
            1,
            k as isize,
            rhs.as_ptr(),
            1,
            n as isize,
            0.0,
            1.0,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

/// One thread's buffers: three activations and a convolution's own.
#[derive(Default)]
struct Scratch {
    a: Vec<f32>,
    b: Vec<f32>,
    c: Vec<f32>,
    conv: ConvScratch,
}

thread_local! {
    /// The buffers of the chunk this thread runs, kept between calls: a
    /// search's evaluation thread, which runs the first chunk of every
    /// batch itself, allocates them once rather than per batch.
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// An im2col tile (f32, or bf16 pairs with the input rounded to bf16).
#[derive(Default)]
struct ConvScratch {
    col: Vec<f32>,
    col16: Vec<u32>,
    src16: Vec<u16>,
}

impl Conv {
    /// This convolution in bf16 on `kernel`, where it is a 3x3 one with a
    /// multiple of 16 outputs (the trunk's); others stay f32.
    fn in_bf16(mut self, kernel: bf16::Kernel) -> Conv {
        if self.k == 3 && self.outputs.is_multiple_of(16) {
            let kk = self.k * self.k * self.inputs;
            let pairs = kernel.pairs(kk);
            let mut weights = bf16::pack_rhs(&self.weights, kk, self.outputs);
            weights.resize(pairs * self.outputs, 0);
            self.packed = Some(Packed { kernel, pairs, weights });
        }
        self
    }
}

impl CpuNet {
    /// The net's weights for this forward pass; with a `bf16` kernel, its
    /// 3x3 convolutions multiply in bf16 on it (only where
    /// [`bf16::Kernel::available`]; f32 elsewhere).
    pub fn new(net: &Net, config: &NetConfig, bf16: Option<bf16::Kernel>) -> CpuNet {
        let bf16 = bf16.filter(|k| k.available());
        let conv = |c: &Conv2d, bn: Option<&BatchNorm>| {
            let folded = fold(c, bn);
            match bf16 {
                Some(kernel) => folded.in_bf16(kernel),
                None => folded,
            }
        };
        let blocks = net.blocks.iter().map(|b| [conv(&b.conv1, Some(&b.bn1)), conv(&b.conv2, Some(&b.bn2))]).collect();
        CpuNet {
            threads: crate::mcts::cores(),
            height: config.height,
            width: config.width,
            planes: config.planes,
            stem: conv(&net.stem, Some(&net.stem_bn)),
            blocks,
            policy: conv(&net.policy_conv, Some(&net.policy_bn)),
            policy_out: fold(&net.policy_out, None),
            value: fold(&net.value_conv, Some(&net.value_bn)),
            value_fc: dense(&net.value_fc),
            value_out: dense(&net.value_out),
        }
    }

    /// Policy logits `[n, types * H * W]` (the policy layout's order) and
    /// values `[n]` of `n` positions encoded as `[n, planes, H, W]`.
    pub fn forward(&self, input: &[f32], n: usize) -> (Vec<f32>, Vec<f32>) {
        let hw = self.height * self.width;
        let (len, plen) = (self.planes * hw, self.policy_out.outputs * hw);
        assert_eq!(input.len(), n * len, "input of {n} positions");
        let mut logits = vec![0.0; n * plen];
        let mut values = vec![0.0; n];
        let threads = self.threads.min(n.div_ceil(4)).max(1);
        let per = n.div_ceil(threads).max(1);
        let run = |(input, (logits, values)): (&[f32], (&mut [f32], &mut [f32]))| {
            SCRATCH.with_borrow_mut(|s| self.forward_chunk(input, logits, values, s));
        };
        let chunks = input.chunks(per * len).zip(logits.chunks_mut(per * plen).zip(values.chunks_mut(per)));
        if threads == 1 {
            chunks.for_each(run);
        } else {
            std::thread::scope(|s| {
                let mut chunks = chunks;
                let first = chunks.next();
                for c in chunks {
                    s.spawn(move || run(c));
                }
                if let Some(c) = first {
                    run(c);
                }
            });
        }
        (logits, values)
    }

    fn forward_chunk(&self, input: &[f32], logits: &mut [f32], values: &mut [f32], s: &mut Scratch) {
        let n = values.len();
        let hw = self.height * self.width;
        // [n, planes, H, W] -> [n * H * W, planes]
        let a = resized(&mut s.a, n * hw * self.planes);
        for p in 0..n {
            for c in 0..self.planes {
                for q in 0..hw {
                    a[(p * hw + q) * self.planes + c] = input[(p * self.planes + c) * hw + q];
                }
            }
        }
        self.conv(&self.stem, n, &s.a, &mut s.b, &mut s.conv, None, true);
        for [first, second] in &self.blocks {
            self.conv(first, n, &s.b, &mut s.c, &mut s.conv, None, true);
            self.conv(second, n, &s.c, &mut s.a, &mut s.conv, Some(&s.b), true);
            std::mem::swap(&mut s.a, &mut s.b);
        }
        // The trunk's output is in b.
        self.conv(&self.policy, n, &s.b, &mut s.a, &mut s.conv, None, true);
        self.conv(&self.policy_out, n, &s.a, &mut s.c, &mut s.conv, None, false);
        let types = self.policy_out.outputs;
        for p in 0..n {
            for q in 0..hw {
                for t in 0..types {
                    logits[(p * types + t) * hw + q] = s.c[(p * hw + q) * types + t];
                }
            }
        }
        self.conv(&self.value, n, &s.b, &mut s.a, &mut s.conv, None, true);
        let vc = self.value.outputs;
        let (fc, out) = (&self.value_fc, &self.value_out);
        // [n * H * W, vc] -> [n, vc * H * W] (channel-major, as burn
        // flattens), then the two dense layers.
        let c = resized(&mut s.c, n * vc * hw);
        for p in 0..n {
            for q in 0..hw {
                for ch in 0..vc {
                    c[p * vc * hw + ch * hw + q] = s.a[(p * hw + q) * vc + ch];
                }
            }
        }
        let hidden = resized(&mut s.b, n * fc.outputs);
        matmul(hidden, c, &fc.weights, n, fc.inputs, fc.outputs);
        for (x, b) in hidden.iter_mut().zip(fc.bias.iter().cycle()) {
            *x = (*x + b).max(0.0);
        }
        for (p, v) in values.iter_mut().enumerate() {
            let hidden = &hidden[p * fc.outputs..(p + 1) * fc.outputs];
            let sum: f32 = hidden.iter().zip(&out.weights).map(|(h, w)| h * w).sum();
            *v = (sum + out.bias[0]).tanh();
        }
    }

    /// `dst = relu?(conv(src) + bias + residual?)` over `n` positions'
    /// channels-last activations.
    #[allow(clippy::too_many_arguments)]
    fn conv(
        &self,
        conv: &Conv,
        n: usize,
        src: &[f32],
        dst: &mut Vec<f32>,
        scratch: &mut ConvScratch,
        residual: Option<&[f32]>,
        relu: bool,
    ) {
        let ConvScratch { col, col16, src16 } = scratch;
        let rows = n * self.height * self.width;
        let (cin, cout) = (conv.inputs, conv.outputs);
        let kk = conv.k * conv.k * cin;
        // Every element of dst, and of each im2col tile, is written below:
        // the buffers are resized, never cleared.
        dst.resize(rows * cout, 0.0);
        if conv.packed.is_some() {
            // Each input is rounded once, not once per tap.
            src16.resize(src.len(), 0);
            bf16::round(src, src16);
        }
        for start in (0..rows).step_by(TILE_ROWS) {
            let m = TILE_ROWS.min(rows - start);
            let out = &mut dst[start * cout..(start + m) * cout];
            if conv.k == 1 {
                matmul(out, &src[start * cin..(start + m) * cin], &conv.weights, m, cin, cout);
            } else if let Some(packed) = &conv.packed {
                let k2 = packed.pairs;
                // The kernel's padding rows (AMX's) are read but never
                // reach out: whatever an earlier tile left there will do.
                let col16 = resized(col16, packed.kernel.rows(m) * k2);
                // SAFETY: u16 needs no more alignment than u32, and the
                // view covers exactly col16's bytes; on this little-endian
                // CPU half 2p of a row is the low half of its word p, as
                // bf16's pairs have it.
                let halves =
                    unsafe { std::slice::from_raw_parts_mut(col16.as_mut_ptr().cast::<u16>(), col16.len() * 2) };
                self.im2col(conv, src16, start, m, 2 * k2, halves);
                packed.kernel.matmul(out, col16, &packed.weights, m, k2, cout);
            } else {
                let col = resized(col, m * kk);
                self.im2col(conv, src, start, m, kk, col);
                matmul(out, col, &conv.weights, m, kk, cout);
            }
            for (r, row) in out.chunks_mut(cout).enumerate() {
                let res = residual.map(|res| &res[(start + r) * cout..(start + r + 1) * cout]);
                for (o, x) in row.iter_mut().enumerate() {
                    let mut v = *x + conv.bias[o];
                    if let Some(res) = res {
                        v += res[o];
                    }
                    *x = if relu { v.max(0.0) } else { v };
                }
            }
        }
    }

    /// Writes the im2col rows `start..start + m` of a 3x3 convolution over
    /// `src` into `col`: every element of rows of `row_len`, zero where a
    /// tap is off the board and past the taps.
    fn im2col<T: Copy + Default>(&self, conv: &Conv, src: &[T], start: usize, m: usize, row_len: usize, col: &mut [T]) {
        let (h, w, cin) = (self.height as isize, self.width as isize, conv.inputs);
        let half = (conv.k / 2) as isize;
        let taps = conv.k * conv.k * cin;
        for (r, row) in col.chunks_exact_mut(row_len).take(m).enumerate() {
            let q = (start + r) % (self.height * self.width);
            let base = start + r - q;
            let (y, x) = ((q / self.width) as isize, (q % self.width) as isize);
            for (tap, to) in row[..taps].chunks_exact_mut(cin).enumerate() {
                let (sy, sx) = (y + (tap / conv.k) as isize - half, x + (tap % conv.k) as isize - half);
                if (0..h).contains(&sy) && (0..w).contains(&sx) {
                    let from = (base + (sy * w + sx) as usize) * cin;
                    copy_channels(to, &src[from..from + cin]);
                } else {
                    to.fill(T::default());
                }
            }
            row[taps..].fill(T::default());
        }
    }
}

/// `to.copy_from_slice(from)`, inlined for the trunks' channel counts: a
/// tap of an im2col row is a short copy, and there are nine per row.
#[inline(always)]
fn copy_channels<T: Copy>(to: &mut [T], from: &[T]) {
    fn fixed<T: Copy, const N: usize>(to: &mut [T], from: &[T]) {
        let (to, from): (&mut [T; N], &[T; N]) = (to.try_into().expect("N"), from.try_into().expect("N"));
        *to = *from;
    }
    match from.len() {
        32 => fixed::<T, 32>(to, from),
        48 => fixed::<T, 48>(to, from),
        64 => fixed::<T, 64>(to, from),
        96 => fixed::<T, 96>(to, from),
        128 => fixed::<T, 128>(to, from),
        _ => to.copy_from_slice(from),
    }
}

/// `buffer` at `len` elements: cut, or grown with zeros (the elements
/// kept are left as they were, for the caller to overwrite).
fn resized<T: Copy + Default>(buffer: &mut Vec<T>, len: usize) -> &mut [T] {
    buffer.resize(len, T::default());
    buffer
}
