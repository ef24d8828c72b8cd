//! Mate searches beside the network, as strong shogi engines run them
//! (dlshogi's leaf and root mate searches): a move the network rates low
//! can still be a forced win, and one the tree would need thousands of
//! playouts to prove is found here in microseconds. The search runs at
//! every new leaf (short), on its own thread at the root (longer), and for
//! USI `go mate` (up to 31 plies).
//!
//! The search is an AND/OR search with the rules' own game: the attacker
//! only tries moves that give check, win at once, or (in campmate
//! variants) bring its king next to the far rank; the defender tries every
//! legal reply. Game ends by repetition are scored by [`Game`], so a
//! perpetual check never counts as a mate. It is sound (a mate it reports
//! is forced) but not complete: a mate that needs a quiet move is left to
//! the tree. There is no transposition table: deep searches grow
//! exponentially, so callers bound them by a position budget or a stop flag.

use crate::rules::{Color, Game, Move, MoveList};
use std::sync::atomic::{AtomicBool, Ordering};

/// A move that wins at once: checkmate or campmate. History rules are
/// respected because `legal` comes from the game; a position with no legal
/// move in itself has none in any game, and a checkmate position cannot have
/// occurred before in the game, so no repetition rule can overrule it.
pub fn mate_in_one(game: &Game, legal: &[Move]) -> Option<Move> {
    mate_in_one_counted(game, legal, &mut 0)
}

/// [`mate_in_one`] that adds the positions it plays to `nodes`.
fn mate_in_one_counted(game: &Game, legal: &[Move], nodes: &mut u64) -> Option<Move> {
    let pos = game.position();
    let t = pos.variant().tables();
    let us = pos.side_to_move();
    for &mv in legal {
        if t.spec.campmate
            && let Move::Normal { from, to, .. } = mv
            && from == pos.king(us)
            && t.far_rank[us.index()].contains(to)
        {
            return Some(mv);
        }
        if pos.gives_check(mv) {
            *nodes += 1;
            if !pos.play(mv).has_legal_move() {
                return Some(mv);
            }
        }
    }
    None
}

/// A forced win for the side to move in at most `max_plies` plies (its own
/// moves and the replies, odd), looking at no more than `budget` positions.
/// Returns the first move and the length of the shortest win it found, or
/// `None` if there is none by checks (or campmate threats) within the
/// limits. `legal` must be the game's legal moves; `game` is left as it was.
pub fn find_mate(game: &mut Game, legal: &[Move], max_plies: u32, budget: u64) -> Option<(Move, u32)> {
    find_mate_until(game, legal, max_plies, budget, &AtomicBool::new(false))
}

/// [`find_mate`] that gives up (`None`) soon after `stop` is set.
pub fn find_mate_until(
    game: &mut Game,
    legal: &[Move],
    max_plies: u32,
    budget: u64,
    stop: &AtomicBool,
) -> Option<(Move, u32)> {
    if max_plies == 0 {
        return None;
    }
    let mut search = MateSearch { nodes: 0, budget, lists: Vec::new(), stop, polls: 0 };
    if let Some(mv) = mate_in_one_counted(game, legal, &mut search.nodes) {
        return Some((mv, 1));
    }
    let mut plies = 3;
    while plies <= max_plies {
        for &mv in legal {
            if search.is_attack(game, mv) && search.attack_wins(game, mv, plies, 0) {
                return Some((mv, plies));
            }
            if search.out_of_budget() {
                return None;
            }
        }
        plies += 2;
    }
    None
}

/// Whether the side to move loses by force within `max_plies` plies (its
/// own reply included, even): every legal reply is answered by a win
/// within `max_plies - 1` plies, looking at no more than `budget`
/// positions. Returns the shortest such bound, or `None` if a reply
/// escapes every search within the limits (or there is no legal reply:
/// the game's end is the caller's to score). The tree asks it at leaves
/// in check, where the replies are few. `legal` must be the game's legal
/// moves; `game` is left as it was.
pub fn find_mated(game: &mut Game, legal: &[Move], max_plies: u32, budget: u64) -> Option<u32> {
    if legal.is_empty() {
        return None;
    }
    let stop = AtomicBool::new(false);
    let mut search = MateSearch { nodes: 0, budget, lists: Vec::new(), stop: &stop, polls: 0 };
    let mut plies = 2;
    while plies <= max_plies {
        if search.all_replies_lose(game, plies, 0) {
            return Some(plies);
        }
        if search.out_of_budget() {
            return None;
        }
        plies += 2;
    }
    None
}

struct MateSearch<'a> {
    /// Positions played so far.
    nodes: u64,
    budget: u64,
    /// Move lists reused per depth.
    lists: Vec<MoveList>,
    stop: &'a AtomicBool,
    /// Budget checks so far; every 256th also reads `stop`.
    polls: u32,
}

impl MateSearch<'_> {
    /// Whether the budget is spent or the caller said stop (then the
    /// budget is spent from here on).
    fn out_of_budget(&mut self) -> bool {
        self.polls = self.polls.wrapping_add(1);
        if self.polls.is_multiple_of(256) && self.stop.load(Ordering::Relaxed) {
            self.budget = 0;
        }
        self.nodes > self.budget
    }

    /// A move the attacker tries before the last ply: a check, or in a
    /// campmate variant a king move from which the far rank is one step
    /// away (the threat to walk in).
    fn is_attack(&self, game: &Game, mv: Move) -> bool {
        let pos = game.position();
        if pos.gives_check(mv) {
            return true;
        }
        let t = pos.variant().tables();
        let us = pos.side_to_move();
        t.spec.campmate
            && matches!(mv, Move::Normal { from, to, .. }
                if from == pos.king(us) && (t.leaps[t.king as usize][us.index()][to.index()] & t.far_rank[us.index()]).any())
    }

    /// Whether the attacker's `mv` forces a win within `plies` plies (its
    /// move included, `plies` >= 3).
    fn attack_wins(&mut self, game: &mut Game, mv: Move, plies: u32, depth: usize) -> bool {
        let us = game.position().side_to_move();
        game.play(mv);
        self.nodes += 1;
        let wins = match game.outcome_before_movegen() {
            Some(outcome) => outcome.winner == Some(us),
            None => self.all_replies_lose(game, plies - 1, depth),
        };
        game.undo();
        wins
    }

    /// The defender to move: whether every legal reply loses within
    /// `plies` plies (the reply included). No legal reply at all is a loss
    /// (checkmate or stalemate, both losses in these variants).
    fn all_replies_lose(&mut self, game: &mut Game, plies: u32, depth: usize) -> bool {
        let defender = game.position().side_to_move();
        let mut replies = self.take_list(depth);
        game.generate_legal(&mut replies);
        let mut all_lose = true;
        for &reply in &replies {
            if self.out_of_budget() {
                all_lose = false;
                break;
            }
            game.play(reply);
            self.nodes += 1;
            let loses = match game.outcome_before_movegen() {
                Some(outcome) => outcome.winner.is_some_and(|w| w != defender),
                None => self.attacker_wins(game, plies - 1, depth + 1),
            };
            game.undo();
            if !loses {
                all_lose = false;
                break;
            }
        }
        self.lists[depth] = replies;
        all_lose
    }

    /// The attacker to move: whether some attack wins within `plies` plies.
    fn attacker_wins(&mut self, game: &mut Game, plies: u32, depth: usize) -> bool {
        let mut moves = self.take_list(depth);
        game.generate_legal(&mut moves);
        let mut wins = !moves.is_empty() && mate_in_one_counted(game, &moves, &mut self.nodes).is_some();
        if !wins && plies >= 3 {
            for &mv in &moves {
                if self.out_of_budget() {
                    break;
                }
                if self.is_attack(game, mv) && self.attack_wins(game, mv, plies, depth + 1) {
                    wins = true;
                    break;
                }
            }
        }
        self.lists[depth] = moves;
        wins
    }

    /// The move list of `depth`, emptied, to fill and give back.
    fn take_list(&mut self, depth: usize) -> MoveList {
        if self.lists.len() <= depth {
            self.lists.resize_with(depth + 1, || MoveList::with_capacity(128));
        }
        std::mem::take(&mut self.lists[depth])
    }
}

/// A line in which `winner` forces a win within `max_plies` plies from the
/// current position of `game` (whoever is to move): the winner's moves
/// from [`find_mate`], the loser's the reply that lasts longest. It stops
/// early if a search runs out of budget or the game ends; `game` is left
/// as it was.
pub fn mate_line(game: &mut Game, winner: Color, max_plies: u32, budget: u64) -> Vec<Move> {
    let mut line = Vec::new();
    let mut left = max_plies;
    while left > 0 && game.outcome_before_movegen().is_none() {
        let legal = game.legal_moves();
        if legal.is_empty() {
            break;
        }
        let mv = if game.position().side_to_move() == winner {
            match find_mate(game, &legal, left, budget) {
                Some((mv, _)) => mv,
                None => break,
            }
        } else {
            // The reply after which the shortest win is longest; one that
            // escapes every search (out of budget) is not taken as a loss.
            let mut best: Option<(Move, u32)> = None;
            for &reply in &legal {
                game.play(reply);
                let distance = match game.outcome_before_movegen() {
                    Some(_) => 0,
                    None => {
                        let replies = game.legal_moves();
                        find_mate(game, &replies, left - 1, budget).map_or(u32::MAX, |(_, plies)| plies)
                    }
                };
                game.undo();
                if best.is_none_or(|(_, d)| distance > d) {
                    best = Some((reply, distance));
                }
            }
            let Some((mv, distance)) = best else { break };
            if distance == u32::MAX {
                break;
            }
            mv
        };
        game.play(mv);
        line.push(mv);
        left -= 1;
    }
    for _ in &line {
        game.undo();
    }
    line
}
