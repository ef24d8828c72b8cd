//! The residual conv net: a stem, `blocks` residual blocks, a convolutional
//! policy head laid out like [`Layout`], a value head and, for training,
//! optional auxiliary heads: material on the value head's hidden layer, the
//! opponent's reply beside the policy.

use super::Layout;
use super::encode::Features;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::{BatchNorm, BatchNormConfig, Linear, LinearConfig, PaddingConfig2d, Relu};
use burn::prelude::*;

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
