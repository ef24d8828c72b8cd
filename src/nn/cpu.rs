//! The net's forward pass on the CPU without burn: the same arithmetic
//! with batch norm folded into the convolutions, activations kept
//! channels-last, each 3x3 convolution an im2col tile times a weight
//! matrix (the `gemm` crate's AVX-512/AVX2 kernels) with its bias, residual
//! and ReLU applied in one pass over the result, and the batch split
//! between threads that each run their positions through the whole net.
//! On AMX the residual blocks and the policy head skip im2col: their
//! activations live on zero-padded boards (`Padded`), from which the tile
//! loads read each tap in place, and each band of sums is finished and
//! rounded to bf16 for the next convolution as it leaves the tiles.
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
    /// With the blocks and the policy head on AMX over padded boards
    /// ([`Padded`]) rather than im2col tiles: the policy head's 1x1
    /// convolution as AMX operands, its columns padded to whole tiles.
    amx_policy: Option<Packed>,
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

/// One thread's buffers: three activations, a convolution's own, and the
/// AMX trunk's on padded boards ([`Padded`]).
#[derive(Default)]
struct Scratch {
    a: Vec<f32>,
    b: Vec<f32>,
    c: Vec<f32>,
    conv: ConvScratch,
    trunk: TrunkScratch,
}

/// The AMX trunk's activations on padded boards: the residual stream in
/// f32 (`x`, a row per padded square), and as bf16 pairs (`x16`) with a
/// block's inner activation, then the policy head's (`t16`), in
/// [`Padded::data_rows`] rows.
#[derive(Default)]
struct TrunkScratch {
    x: Vec<f32>,
    x16: Vec<u32>,
    t16: Vec<u32>,
}

/// `n` positions' boards laid out for a 3x3 convolution without im2col:
/// each board row is followed by a zero square and each board by a zero
/// row, so that a square's nine taps are nine fixed row offsets away and
/// every tap off the board lands on a zero. Row `r` of the layout is a
/// square or padding; the bf16 operands also hold [`Padded::lead`] zero
/// rows before the first board and after the last, so every offset reads
/// inside them. On 9x9 boards a position is 100 rows for 81 squares.
struct Padded {
    height: usize,
    width: usize,
    rows: usize,
}

impl Padded {
    fn new(height: usize, width: usize, n: usize) -> Padded {
        Padded { height, width, rows: n * (height + 1) * (width + 1) }
    }

    /// Rows per board row (the squares and one zero).
    fn line(&self) -> usize {
        self.width + 1
    }

    /// Zero rows of the bf16 operands before the first board: a tap
    /// reaches one line and one square back.
    fn lead(&self) -> usize {
        self.line() + 1
    }

    /// Rows of a bf16 operand: the lead, the boards with their row count
    /// rounded up to AMX tiles, and as many zero rows after.
    fn data_rows(&self) -> usize {
        self.rows.next_multiple_of(super::amx::TILE) + 2 * self.lead()
    }

    /// The square (its row in the unpadded layout) at row `r`; `None` at
    /// padding.
    fn square(&self, r: usize) -> Option<usize> {
        let block = (self.height + 1) * self.line();
        let (p, q) = (r / block, r % block);
        let (y, x) = (q / self.line(), q % self.line());
        (y < self.height && x < self.width).then(|| (p * self.height + y) * self.width + x)
    }

    /// Where, in pairs from the row it computes, a 3x3 convolution over
    /// `inputs` channels reads each K-step of `step` pairs: tap by tap in
    /// the weights' (ky, kx, channel) order.
    fn offsets(&self, inputs: usize, step: usize) -> Vec<usize> {
        let pairs = inputs / 2;
        let mut offsets = Vec::with_capacity(9 * pairs / step);
        for ky in 0..3 {
            for kx in 0..3 {
                // lead + (ky - 1) * line + (kx - 1), never negative.
                let row = ky * self.line() + kx;
                offsets.extend((0..pairs).step_by(step).map(|p| row * pairs + p));
            }
        }
        offsets
    }
}

thread_local! {
    /// The buffers of the chunk this thread runs, kept between calls: a
    /// search's evaluation thread, which runs the first chunk of every
    /// batch itself, and the pool threads that run the others allocate
    /// them once rather than per batch.
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
        let blocks: Vec<[Conv; 2]> =
            net.blocks.iter().map(|b| [conv(&b.conv1, Some(&b.bn1)), conv(&b.conv2, Some(&b.bn2))]).collect();
        let policy = conv(&net.policy_conv, Some(&net.policy_bn));
        let policy_out = fold(&net.policy_out, None);
        let amx_trunk =
            blocks.iter().flatten().chain([&policy]).all(|c| {
                c.packed.as_ref().is_some_and(|p| p.kernel == bf16::Kernel::Amx) && c.inputs.is_multiple_of(2)
            });
        let amx_policy = amx_trunk.then(|| {
            let (inputs, types) = (policy_out.inputs, policy_out.outputs);
            let columns = types.next_multiple_of(super::amx::TILE);
            let mut padded = vec![0.0; inputs * columns];
            for (to, from) in padded.chunks_exact_mut(columns).zip(policy_out.weights.chunks_exact(types)) {
                to[..types].copy_from_slice(from);
            }
            Packed { kernel: bf16::Kernel::Amx, pairs: inputs / 2, weights: bf16::pack_rhs(&padded, inputs, columns) }
        });
        CpuNet {
            threads: crate::mcts::cores(),
            height: config.height,
            width: config.width,
            planes: config.planes,
            stem: conv(&net.stem, Some(&net.stem_bn)),
            blocks,
            policy,
            policy_out,
            value: fold(&net.value_conv, Some(&net.value_bn)),
            value_fc: dense(&net.value_fc),
            value_out: dense(&net.value_out),
            amx_policy,
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
            // The calling thread runs the first chunk; rayon's pool threads,
            // which live on, run the others, each keeping its buffers (and
            // its AMX tile state) from one batch to the next.
            let run = &run;
            rayon::in_place_scope(|s| {
                let mut chunks = chunks;
                let first = chunks.next();
                for c in chunks {
                    s.spawn(move |_| run(c));
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
        if let Some(policy_out) = &self.amx_policy {
            self.amx_trunk(&mut s.b, policy_out, logits, &mut s.trunk);
        } else {
            for [first, second] in &self.blocks {
                self.conv(first, n, &s.b, &mut s.c, &mut s.conv, None, true);
                self.conv(second, n, &s.c, &mut s.a, &mut s.conv, Some(&s.b), true);
                std::mem::swap(&mut s.a, &mut s.b);
            }
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
        }
        // The trunk's output is in b.
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

    /// The residual blocks and the policy head on AMX over padded boards,
    /// for the positions whose stem output is in `b` (channels-last):
    /// leaves the trunk's output in `b`, as the im2col path does, and
    /// writes the policy logits (`policy_out`: the head's 1x1 convolution
    /// packed for AMX).
    fn amx_trunk(&self, b: &mut [f32], policy_out: &Packed, logits: &mut [f32], scratch: &mut TrunkScratch) {
        let channels = self.policy.inputs;
        let layout = Padded::new(self.height, self.width, b.len() / (self.height * self.width * channels));
        let (rows, lead, data) = (layout.rows, layout.lead(), layout.data_rows() * channels / 2);
        let TrunkScratch { x, x16, t16 } = scratch;
        let x = resized(x, rows * channels);
        for (r, row) in x.chunks_exact_mut(channels).enumerate() {
            match layout.square(r) {
                Some(q) => copy_channels(row, &b[q * channels..(q + 1) * channels]),
                None => row.fill(0.0),
            }
        }
        let (x16, t16) = (resized(x16, data), resized(t16, data));
        // Every row of the boards is written below; the zero rows around
        // them are written here.
        for buffer in [&mut *x16, &mut *t16] {
            let halves = halves(buffer);
            halves[..lead * channels].fill(0);
            halves[(lead + rows) * channels..].fill(0);
        }
        bf16::round(x, &mut halves(x16)[lead * channels..(lead + rows) * channels]);
        for [first, second] in &self.blocks {
            self.amx_conv(first, &layout, x16, None, |r, sums| {
                bf16::round(sums, &mut halves(t16)[(lead + r) * channels..][..sums.len()]);
            });
            self.amx_conv(second, &layout, t16, Some(&mut *x), |r, sums| {
                bf16::round(sums, &mut halves(x16)[(lead + r) * channels..][..sums.len()]);
            });
        }
        self.amx_conv(&self.policy, &layout, x16, None, |r, sums| {
            bf16::round(sums, &mut halves(t16)[(lead + r) * channels..][..sums.len()]);
        });
        // The 1x1 convolution reads each row where it is, and writes the
        // squares' logits straight to their places, type by type.
        let (hw, types, pairs) = (self.height * self.width, self.policy_out.outputs, channels / 2);
        let step = tile_step(pairs);
        let offsets: Vec<usize> = (0..pairs).step_by(step).map(|p| lead * pairs + p).collect();
        let lhs = super::amx::Lhs { data: t16, stride: pairs, step, offsets: &offsets };
        let columns = policy_out.weights.len() / pairs;
        super::amx::product(&lhs, &policy_out.weights, rows, columns, |r, sums| {
            for (i, row) in sums.chunks_exact(columns).enumerate() {
                if let Some(q) = layout.square(r + i) {
                    let (p, square) = (q / hw, q % hw);
                    for (t, (x, bias)) in row.iter().zip(&self.policy_out.bias).enumerate() {
                        logits[(p * types + t) * hw + square] = x + bias;
                    }
                }
            }
        });
        for (r, row) in x.chunks_exact(channels).enumerate() {
            if let Some(q) = layout.square(r) {
                copy_channels(&mut b[q * channels..(q + 1) * channels], row);
            }
        }
    }

    /// A 3x3 `conv` (AMX-packed) over the bf16 boards `src`: hands `sink`
    /// each band of rows finished, `relu(sums + bias + stream?)` with zeros
    /// at padding. A residual `stream` (f32, a row per padded square) is
    /// added and then overwritten with the result.
    fn amx_conv(
        &self,
        conv: &Conv,
        layout: &Padded,
        src: &[u32],
        mut stream: Option<&mut [f32]>,
        mut sink: impl FnMut(usize, &mut [f32]),
    ) {
        let packed = conv.packed.as_ref().expect("an AMX-packed convolution");
        let pairs = conv.inputs / 2;
        let step = tile_step(pairs);
        let offsets = layout.offsets(conv.inputs, step);
        let lhs = super::amx::Lhs { data: src, stride: pairs, step, offsets: &offsets };
        let cout = conv.outputs;
        super::amx::product(&lhs, &packed.weights, layout.rows, cout, |r, sums| {
            for (i, row) in sums.chunks_exact_mut(cout).enumerate() {
                if layout.square(r + i).is_none() {
                    row.fill(0.0);
                    continue;
                }
                match stream.as_deref_mut() {
                    Some(stream) => {
                        let res = &mut stream[(r + i) * cout..(r + i + 1) * cout];
                        for ((x, b), res) in row.iter_mut().zip(&conv.bias).zip(res) {
                            *x = (*x + b + *res).max(0.0);
                            *res = *x;
                        }
                    }
                    None => {
                        for (x, b) in row.iter_mut().zip(&conv.bias) {
                            *x = (*x + b).max(0.0);
                        }
                    }
                }
            }
            sink(r, sums);
        });
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
                self.im2col(conv, src16, start, m, 2 * k2, halves(col16));
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

/// The longest AMX K-step, up to a tile's 16 pairs, that splits a tap of
/// `pairs` pairs.
fn tile_step(pairs: usize) -> usize {
    [16, 8, 4, 2, 1].into_iter().find(|s| pairs.is_multiple_of(*s)).unwrap_or(1)
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

/// bf16 pairs as their halves: half `2p` of a row is the low half of its
/// word `p`, as [`bf16`]'s pairs have it on this little-endian CPU.
fn halves(pairs: &mut [u32]) -> &mut [u16] {
    // SAFETY: u16 needs no more alignment than u32, and the view covers
    // exactly the words' bytes.
    unsafe { std::slice::from_raw_parts_mut(pairs.as_mut_ptr().cast::<u16>(), pairs.len() * 2) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every square of every board has one row, and each of its nine taps,
    /// read at the offsets, is the neighbouring square's row or a zero one.
    #[test]
    fn padded_boards_put_each_tap_on_its_neighbour_or_on_padding() {
        for (h, w, n) in [(5, 5, 3), (9, 9, 2), (4, 7, 2)] {
            let layout = Padded::new(h, w, n);
            let mut rows = vec![None; n * h * w];
            for r in 0..layout.rows {
                if let Some(q) = layout.square(r) {
                    assert!(rows[q].replace(r).is_none(), "square {q} twice");
                }
            }
            // One channel pair a square: an offset is the tap's row shift.
            let offsets = layout.offsets(2, 1);
            assert_eq!(offsets.len(), 9);
            for (q, r) in rows.iter().enumerate() {
                let (p, y, x) = (q / (h * w), (q / w % h) as isize, (q % w) as isize);
                let r = r.expect("every square has a row");
                for (tap, offset) in offsets.iter().enumerate() {
                    let (sy, sx) = (y + (tap / 3) as isize - 1, x + (tap % 3) as isize - 1);
                    let want = ((0..h as isize).contains(&sy) && (0..w as isize).contains(&sx))
                        .then(|| (p * h + sy as usize) * w + sx as usize);
                    // Row d of a bf16 operand is row d - lead of the layout.
                    let d = r + offset;
                    assert!(d < layout.data_rows());
                    let got = d.checked_sub(layout.lead()).filter(|&l| l < layout.rows).and_then(|l| layout.square(l));
                    assert_eq!(got, want, "{h}x{w}: square {q}, tap {tap}");
                }
            }
        }
    }
}
