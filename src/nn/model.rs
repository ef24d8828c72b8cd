//! The residual conv net: a stem, `blocks` residual blocks, a convolutional
//! policy head laid out like [`Layout`], a value head and, for training,
//! optional auxiliary heads: material on the value head's hidden layer, the
//! opponent's reply beside the policy.

use super::Layout;
use super::encode::Features;
use burn::module::{Param, ParamId, RunningState};
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::{BatchNorm, BatchNormConfig, Linear, LinearConfig, PaddingConfig2d, Relu};
use burn::prelude::*;

/// Held while a net's weights are drawn (see [`NetConfig::init_seeded`]).
static INIT: parking_lot::Mutex<()> = parking_lot::Mutex::new(());

/// The size of a net, and the encoding it was made for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetConfig {
    /// Residual blocks (two 3x3 convolutions each).
    pub blocks: usize,
    /// Channels of the trunk.
    pub channels: usize,
    /// Channels of the value head's 1x1 convolution.
    pub value_channels: usize,
    /// Hidden units of the value head.
    pub value_hidden: usize,
    /// The input features the net reads, and the encoding sizes: input
    /// planes, move types, board height and width.
    pub features: Features,
    pub planes: usize,
    pub types: usize,
    pub height: usize,
    pub width: usize,
    /// Whether the net has the auxiliary material head (a training
    /// target only: play and analysis never read it).
    pub material_head: bool,
    /// Whether the net has the auxiliary reply head (the opponent's reply
    /// to the move played; a training target only).
    pub reply_head: bool,
}

impl NetConfig {
    /// A net of the given size for `layout`.
    pub fn new(layout: &Layout, blocks: usize, channels: usize) -> NetConfig {
        NetConfig {
            blocks,
            channels,
            value_channels: 4,
            value_hidden: 64,
            features: layout.features,
            planes: layout.planes,
            types: layout.types,
            height: layout.height,
            width: layout.width,
            material_head: false,
            reply_head: false,
        }
    }

    /// The small default that runs well on a CPU.
    pub fn small(layout: &Layout) -> NetConfig {
        NetConfig::new(layout, 4, 48)
    }

    /// A larger net meant for GPUs.
    pub fn large(layout: &Layout) -> NetConfig {
        NetConfig::new(layout, 10, 128)
    }

    /// Trainable parameters of a net of this size.
    pub fn parameters(&self) -> usize {
        let conv = |i: usize, o: usize, k: usize| i * o * k * k + o;
        let bn = |c: usize| 2 * c;
        let c = self.channels;
        let hw = self.height * self.width;
        conv(self.planes, c, 3)
            + bn(c)
            + self.blocks * 2 * (conv(c, c, 3) + bn(c))
            + conv(c, c, 3)
            + bn(c)
            + conv(c, self.types, 1)
            + conv(c, self.value_channels, 1)
            + bn(self.value_channels)
            + self.value_channels * hw * self.value_hidden
            + self.value_hidden
            + self.value_hidden
            + 1
            + if self.material_head { self.value_hidden + 1 } else { 0 }
            + if self.reply_head { conv(c, self.types, 1) } else { 0 }
    }

    /// Multiply-adds of one forward pass of one position (play's forward
    /// pass: without the auxiliary heads).
    pub fn flops_per_position(&self) -> u64 {
        let hw = (self.height * self.width) as u64;
        let c = self.channels as u64;
        let conv = |i: u64, o: u64, k: u64| i * o * k * k * hw;
        let total = conv(self.planes as u64, c, 3)
            + self.blocks as u64 * 2 * conv(c, c, 3)
            + conv(c, c, 3)
            + conv(c, self.types as u64, 1)
            + conv(c, self.value_channels as u64, 1)
            + self.value_channels as u64 * hw * self.value_hidden as u64
            + self.value_hidden as u64;
        2 * total
    }

    /// Builds a net with fresh random weights on `device`.
    pub fn init(&self, device: &Device) -> Net {
        let _one_at_a_time = INIT.lock();
        self.build(device).numbered()
    }

    /// Builds a net with random weights drawn from `seed`: the same seed
    /// gives the same net. The backend's random source is process-wide and
    /// burn draws a parameter's values when it is first read, so every
    /// init draws all its values at once (numbering the parameters reads each
    /// parameter) under one lock: another thread's init cannot draw
    /// between this one's seeding and its draws.
    pub fn init_seeded(&self, device: &Device, seed: u64) -> Net {
        let _one_at_a_time = INIT.lock();
        device.seed(seed);
        self.build(device).numbered()
    }

    fn build(&self, device: &Device) -> Net {
        let conv3 = |i, o| Conv2dConfig::new([i, o], [3, 3]).with_padding(PaddingConfig2d::Same).init(device);
        let bn = |c| BatchNormConfig::new(c).init(device);
        let c = self.channels;
        Net {
            stem: conv3(self.planes, c),
            stem_bn: bn(c),
            blocks: (0..self.blocks)
                .map(|_| ResidualBlock { conv1: conv3(c, c), bn1: bn(c), conv2: conv3(c, c), bn2: bn(c) })
                .collect(),
            policy_conv: conv3(c, c),
            policy_bn: bn(c),
            policy_out: Conv2dConfig::new([c, self.types], [1, 1]).init(device),
            value_conv: Conv2dConfig::new([c, self.value_channels], [1, 1]).init(device),
            value_bn: bn(self.value_channels),
            value_fc: LinearConfig::new(self.value_channels * self.height * self.width, self.value_hidden).init(device),
            value_out: LinearConfig::new(self.value_hidden, 1).init(device),
            material_out: self.material_head.then(|| material_head(self.value_hidden, device)),
            reply_out: self.reply_head.then(|| reply_head(self.channels, self.types, device)),
            relu: Relu::new(),
        }
    }
}

fn material_head(value_hidden: usize, device: &Device) -> Linear {
    LinearConfig::new(value_hidden, 1).init(device)
}

fn reply_head(channels: usize, types: usize, device: &Device) -> Conv2d {
    Conv2dConfig::new([channels, types], [1, 1]).init(device)
}

/// Which auxiliary heads a training forward pass computes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AuxHeads {
    pub material: bool,
    pub reply: bool,
}

/// The outputs of [`Net::forward_train`].
#[derive(Debug)]
pub struct TrainOutputs {
    /// Policy logits `[B, policy]`.
    pub logits: Tensor<2>,
    /// Value `[B, 1]` in [-1, 1].
    pub value: Tensor<2>,
    /// The material head's prediction `[B, 1]` in [-1, 1].
    pub material: Option<Tensor<2>>,
    /// The reply head's logits `[B, policy]`: the opponent's move after
    /// the one played, its squares seen from the side to move
    /// ([`Layout::reply_index`]).
    pub reply: Option<Tensor<2>>,
}

#[derive(Module, Debug)]
pub struct ResidualBlock {
    pub(super) conv1: Conv2d,
    pub(super) bn1: BatchNorm,
    pub(super) conv2: Conv2d,
    pub(super) bn2: BatchNorm,
}

impl ResidualBlock {
    fn forward(&self, x: Tensor<4>, relu: &Relu) -> Tensor<4> {
        let y = relu.forward(self.bn1.forward(self.conv1.forward(x.clone())));
        let y = self.bn2.forward(self.conv2.forward(y));
        relu.forward(y + x)
    }
}

/// The network. Input `[B, planes, H, W]`; output policy logits
/// `[B, types * H * W]` (policy layout order) and value `[B, 1]` in
/// [-1, 1] from the side to move's view; in training, also the auxiliary
/// heads' outputs where the net has them ([`TrainOutputs`]).
#[derive(Module, Debug)]
pub struct Net {
    pub(super) stem: Conv2d,
    pub(super) stem_bn: BatchNorm,
    pub(super) blocks: Vec<ResidualBlock>,
    pub(super) policy_conv: Conv2d,
    pub(super) policy_bn: BatchNorm,
    pub(super) policy_out: Conv2d,
    pub(super) value_conv: Conv2d,
    pub(super) value_bn: BatchNorm,
    pub(super) value_fc: Linear,
    pub(super) value_out: Linear,
    material_out: Option<Linear>,
    reply_out: Option<Conv2d>,
    relu: Relu,
}

impl Net {
    /// The same net reading `extra` more input planes after the ones it
    /// reads now, with zero weights on them: its outputs do not change,
    /// and training can then learn to use the new planes (how a net made
    /// for [`Features::Base`] becomes one for [`Features::Attacks`], whose
    /// extra planes come last).
    pub fn with_extra_planes(mut self, extra: usize) -> Net {
        self.stem.weight = self.stem.weight.map(|w| {
            let [out, _, kh, kw] = w.dims();
            let zeros = Tensor::zeros([out, extra, kh, kw], &w.device());
            Tensor::cat(vec![w, zeros], 1)
        });
        self
    }

    /// The same net with freshly initialised auxiliary heads where `config`
    /// names one that the net lacks (the heads it has are kept); its other
    /// outputs do not change.
    pub fn with_heads(mut self, config: &NetConfig, device: &Device) -> Net {
        if config.material_head && self.material_out.is_none() {
            self.material_out = Some(material_head(config.value_hidden, device));
        }
        if config.reply_head && self.reply_out.is_none() {
            self.reply_out = Some(reply_head(config.channels, config.types, device));
        }
        self
    }

    /// The net grown to `fresh`'s blocks and channels (at least its own)
    /// without changing what it computes: every layer keeps its weights in
    /// its first rows and columns; the new rows (new channels) take `fresh`'s
    /// random weights and the weights from new channels into old ones start
    /// at zero, so the new channels compute but nothing old reads them until
    /// training moves those zeros. The added residual blocks are `fresh`'s
    /// with their second batch norm's scale at zero, so each adds nothing
    /// to the trunk (its input is a ReLU's output, which the block's final
    /// ReLU passes unchanged) while its scale still gets gradients. The old
    /// blocks keep their order, spread evenly among the new ones.
    pub fn grown(self, fresh: Net) -> Net {
        let old_blocks = self.blocks.len();
        let new_blocks = fresh.blocks.len();
        assert!(old_blocks <= new_blocks, "a net grows, never shrinks");
        let (c, _) = conv_dims(&self.stem);
        let (new_c, _) = conv_dims(&fresh.stem);
        assert!(c <= new_c, "a net grows, never shrinks");
        // Old block i goes to slot i * new / old (distinct, increasing).
        let slot = |i: usize| (i * new_blocks).checked_div(old_blocks).unwrap_or(0);
        let mut old = self.blocks.into_iter().enumerate().peekable();
        let blocks = fresh
            .blocks
            .into_iter()
            .enumerate()
            .map(|(at, block)| match old.next_if(|(i, _)| slot(*i) == at) {
                Some((_, kept)) => ResidualBlock {
                    conv1: embed_conv(block.conv1, kept.conv1),
                    bn1: embed_bn(block.bn1, kept.bn1),
                    conv2: embed_conv(block.conv2, kept.conv2),
                    bn2: embed_bn(block.bn2, kept.bn2),
                },
                None => {
                    let mut bn2 = block.bn2;
                    bn2.gamma = bn2.gamma.map(|g| g.zeros_like());
                    ResidualBlock { bn2, ..block }
                }
            })
            .collect();
        Net {
            stem: embed_conv(fresh.stem, self.stem),
            stem_bn: embed_bn(fresh.stem_bn, self.stem_bn),
            blocks,
            policy_conv: embed_conv(fresh.policy_conv, self.policy_conv),
            policy_bn: embed_bn(fresh.policy_bn, self.policy_bn),
            policy_out: embed_conv(fresh.policy_out, self.policy_out),
            value_conv: embed_conv(fresh.value_conv, self.value_conv),
            value_bn: self.value_bn,
            value_fc: self.value_fc,
            value_out: self.value_out,
            material_out: self.material_out,
            reply_out: match (fresh.reply_out, self.reply_out) {
                (Some(f), Some(kept)) => Some(embed_conv(f, kept)),
                (_, kept) => kept,
            },
            relu: self.relu,
        }
    }

    /// The net with its parameters numbered in module order. Burn gives
    /// every parameter a random id, which a record stores and the optimiser
    /// keys its state by; numbered when loaded and when written, the same
    /// weights always make the same weight-file bytes, and a training
    /// checkpoint's optimiser state matches the net read back with it.
    pub(super) fn numbered(self) -> Net {
        let mut net = self.map(&mut NumberParams(0));
        let mut n = 1 << 32; // the running statistics' ids, apart from the parameters'
        for bn in net.batch_norms_mut() {
            for state in [&mut bn.running_mean, &mut bn.running_var] {
                n += 1;
                *state = RunningState::with_id(ParamId::from(n), state.value());
            }
        }
        net
    }

    fn batch_norms_mut(&mut self) -> impl Iterator<Item = &mut BatchNorm> {
        let blocks = self.blocks.iter_mut().flat_map(|b| [&mut b.bn1, &mut b.bn2]);
        std::iter::once(&mut self.stem_bn).chain(blocks).chain([&mut self.policy_bn, &mut self.value_bn])
    }

    /// Policy logits and value (play and analysis).
    pub fn forward(&self, x: Tensor<4>) -> (Tensor<2>, Tensor<2>) {
        let out = self.forward_train(x, AuxHeads::default());
        (out.logits, out.value)
    }

    /// Policy logits, value and the auxiliary heads asked for in `aux`
    /// (each `None` when not asked for or when the net lacks the head).
    pub fn forward_train(&self, x: Tensor<4>, aux: AuxHeads) -> TrainOutputs {
        let relu = &self.relu;
        let mut x = relu.forward(self.stem_bn.forward(self.stem.forward(x)));
        for block in &self.blocks {
            x = block.forward(x, relu);
        }
        let [b, _, _, _] = x.dims();
        // [B, C, H, W] -> [B, types, H, W] -> [B, types * H * W]
        let p = relu.forward(self.policy_bn.forward(self.policy_conv.forward(x.clone())));
        let reply = match &self.reply_out {
            Some(head) if aux.reply => Some(head.forward(p.clone()).reshape([b as i64, -1])),
            _ => None,
        };
        let logits: Tensor<2> = self.policy_out.forward(p).reshape([b as i64, -1]);
        // [B, C, H, W] -> [B, Cv, H, W] -> [B, Cv * H * W] -> [B, hidden] -> [B, 1]
        let v = relu.forward(self.value_bn.forward(self.value_conv.forward(x)));
        let v: Tensor<2> = v.reshape([b as i64, -1]);
        let v = relu.forward(self.value_fc.forward(v));
        let material = match &self.material_out {
            Some(head) if aux.material => Some(head.forward(v.clone()).tanh()),
            _ => None,
        };
        TrainOutputs { logits, value: self.value_out.forward(v).tanh(), material, reply }
    }
}

/// Numbers parameters 1, 2, ... in the order the module visits them.
struct NumberParams(u64);

impl burn::module::ModuleMapper for NumberParams {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        self.0 += 1;
        let (_, value, mapper) = param.consume();
        Param::from_mapped_value(ParamId::from(self.0), value, mapper)
    }
}

/// A convolution's output and input channels.
fn conv_dims(conv: &Conv2d) -> (usize, usize) {
    let [out, input, _, _] = conv.weight.dims();
    (out, input)
}

/// `fresh` (a layer of the grown net) holding `old`'s weights in its first
/// output rows and input columns, with zeros from the new inputs into the
/// old outputs (see [`Net::grown`]).
fn embed_conv(fresh: Conv2d, old: Conv2d) -> Conv2d {
    let (out, input) = conv_dims(&old);
    let (_, new_input) = conv_dims(&fresh);
    let old_weight = old.weight.val();
    let weight = fresh.weight.map(|w| {
        let [_, _, kh, kw] = w.dims();
        let w = w.slice_assign([0..out, 0..input, 0..kh, 0..kw], old_weight);
        if input < new_input { w.slice_fill([0..out, input..new_input, 0..kh, 0..kw], 0.0) } else { w }
    });
    let bias = match (fresh.bias, old.bias) {
        (Some(f), Some(o)) => Some(f.map(|b| embed_vector(b, o.val()))),
        (f, _) => f,
    };
    Conv2d { weight, bias, ..fresh }
}

/// `fresh` with `old`'s scale, shift and running statistics in its first
/// channels; the new channels keep a fresh batch norm's.
fn embed_bn(fresh: BatchNorm, old: BatchNorm) -> BatchNorm {
    let old_gamma = old.gamma.val();
    let old_beta = old.beta.val();
    BatchNorm {
        gamma: fresh.gamma.map(|g| embed_vector(g, old_gamma)),
        beta: fresh.beta.map(|b| embed_vector(b, old_beta)),
        running_mean: RunningState::new(embed_vector(fresh.running_mean.value(), old.running_mean.value())),
        running_var: RunningState::new(embed_vector(fresh.running_var.value(), old.running_var.value())),
        ..fresh
    }
}

fn embed_vector(fresh: Tensor<1>, old: Tensor<1>) -> Tensor<1> {
    let [n] = old.dims();
    fresh.slice_assign(0..n, old)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nn::Layout;
    use crate::rules::Variant;
    use burn::optim::{AdamWConfig, GradientsParams};

    /// A grown net's new parts are not dead: one optimiser step moves the
    /// zero weights from new channels into old ones and the zero scales of
    /// the added blocks.
    #[test]
    fn a_grown_nets_new_parts_learn() {
        let device = Device::flex();
        let variant = Variant::Minishogi;
        let layout = Layout::new(variant);
        let small = NetConfig::new(&layout, 1, 4);
        let large = NetConfig::new(&layout, 3, 8);
        let net = small.init_seeded(&device, 4).grown(large.init(&device));
        // Trained as training does: loaded from a file onto the autodiff device.
        let bytes = crate::nn::weights::to_bytes(variant, &large, &net).unwrap();
        let device = device.autodiff();
        let net = crate::nn::weights::load(&bytes, Some(variant), &device).unwrap().net;
        let zeros = |t: Tensor<4>| t.slice([0..4, 4..8, 0..3, 0..3]).abs().sum().into_scalar::<f32>();
        assert_eq!(zeros(net.blocks[0].conv1.weight.val()), 0.0);
        let added: Vec<usize> =
            (0..3).filter(|&i| net.blocks[i].bn2.gamma.val().abs().sum().into_scalar::<f32>() == 0.0).collect();
        assert_eq!(added, [1, 2], "the old block goes first, the two added blocks start as the identity");
        let mut rng = crate::mcts::Rng::new(4);
        let values: Vec<f32> = (0..6 * layout.planes * 25).map(|_| rng.uniform() as f32).collect();
        let x = Tensor::<4>::from_data(burn::tensor::TensorData::new(values, [6, layout.planes, 5, 5]), &device);
        let (logits, value) = net.forward(x);
        let loss = logits.powi_scalar(2).mean() + value.sum();
        let grads = GradientsParams::from_grads(loss.backward(), &net);
        let net = AdamWConfig::new().init().step(1e-2, net, grads);
        assert!(zeros(net.blocks[0].conv1.weight.val()) > 0.0);
        for i in added {
            assert!(net.blocks[i].bn2.gamma.val().abs().sum().into_scalar::<f32>() > 0.0, "block {i}");
        }
    }
}
