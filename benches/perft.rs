//! Perft speed on the start positions and a middlegame with full hands.
//! Each iteration asserts its node count, so a fast wrong generator
//! cannot pass as a fast right one. Throughput is reported in leaves/s.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use pantheon::notation::parse_position;
use pantheon::rules::Game;
use pantheon::rules::perft::{BENCH_POSITIONS, perft};
use std::hint::black_box;

fn perft_bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("perft");
    group.sample_size(10);
    for case in BENCH_POSITIONS {
        let pos = parse_position(case.variant, case.sfen).expect("valid bench SFEN");
        group.throughput(Throughput::Elements(case.count));
        group.bench_function(case.name, |b| {
            b.iter(|| {
                let n = perft(&mut Game::new(pos.clone()), black_box(case.depth));
                assert_eq!(n, case.count, "{}", case.name);
                n
            })
        });
    }
    group.finish();
}

criterion_group!(benches, perft_bench);
criterion_main!(benches);
