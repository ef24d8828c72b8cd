// Masked softmax over the legal moves of each position of a batch.
//
// The policy head produces logits for every index of the policy layout
// (thousands per position on 9x9 boards); a position has about a hundred
// legal moves. This kernel gathers the legal moves' logits on the GPU and
// normalises them there, so only one probability per legal move is read
// back instead of the whole logit tensor. Same arithmetic as
// `nn::evaluator::softmax` on the CPU: subtract the maximum, exponentiate,
// divide by the sum taken in move order.
//
// Bindings (all must be used, wgpu derives the layout from the shader; all
// are declared read_write because cubecl sub-allocates its buffers from
// shared pages, and a page bound both read-only and read-write in one
// dispatch is a wgpu validation error):
//   0 logits: [batch * policy_len] f32, row-major
//   1 header: [batch, policy_len, offset_0, ..., offset_batch] u32; the
//             legal moves of position b are moves[offset_b .. offset_b+1]
//   2 moves:  policy indices of the legal moves, all positions concatenated
//   3 probs:  one probability per entry of `moves`
// One invocation per position.

@group(0) @binding(0) var<storage, read_write> logits: array<f32>;
@group(0) @binding(1) var<storage, read_write> header: array<u32>;
@group(0) @binding(2) var<storage, read_write> moves: array<u32>;
@group(0) @binding(3) var<storage, read_write> probs: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let b = gid.x;
    if (b >= header[0]) {
        return;
    }
    let row = b * header[1];
    let start = header[2u + b];
    let end = header[3u + b];
    var top = -3.4e38;
    for (var i = start; i < end; i = i + 1u) {
        top = max(top, logits[row + moves[i]]);
    }
    var sum = 0.0;
    for (var i = start; i < end; i = i + 1u) {
        let e = exp(logits[row + moves[i]] - top);
        probs[i] = e;
        sum = sum + e;
    }
    for (var i = start; i < end; i = i + 1u) {
        probs[i] = probs[i] / sum;
    }
}
