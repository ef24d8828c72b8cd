//! [`Game`]: a start position, the moves played and the history the
//! repetition rules need.

use super::outcome::perpetual_checkers;
use super::variant::Repetition;
use super::{Color, EndReason, Move, MoveList, Outcome, Position};

/// What the repetition rules remember of each position of a game.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct HistoryEntry {
    pub hash: u64,
    /// The side to move was in check: the move that led here gave check.
    pub in_check: bool,
    /// How many times this position has occurred so far, this one
    /// included (1 = first time).
    pub occurrence: u8,
    /// Index of the previous occurrence, if `occurrence > 1`.
    prev: u32,
}

/// A game from a start position: the current position, the moves and the
/// positions so far. Positions are kept whole (copy-make), so undoing a
/// move is a pop.
///
/// A game made by [`Game::branch`] keeps the history entries of all
/// earlier positions (for the repetition rules) but only the current
/// position itself: it cannot undo past its branch point.
#[derive(Clone, Debug)]
pub struct Game {
    /// The positions from the start (or branch point) to the current one,
    /// which is the last; they are the last `positions.len()` entries of
    /// `history`.
    positions: Vec<Position>,
    moves: Vec<Move>,
    /// One entry per position from the start of the game.
    history: Vec<HistoryEntry>,
    /// Indices of entries with `occurrence >= 2`, ascending (Mansindam
    /// forbids moves back into these positions).
    repeated: Vec<u32>,
}

impl Game {
    pub fn new(start: Position) -> Game {
        let entry = HistoryEntry { hash: start.hash(), in_check: start.in_check(), occurrence: 1, prev: 0 };
        Game { positions: vec![start], moves: Vec::new(), history: vec![entry], repeated: Vec::new() }
    }

    /// The current position.
    #[inline]
    pub fn position(&self) -> &Position {
        self.positions.last().expect("a game has at least its start position")
    }

    /// The first position this game holds: the start position, or the
    /// branch point of a [`Game::branch`].
    pub fn start(&self) -> &Position {
        &self.positions[0]
    }

    /// A game continuing from the current position that shares its
    /// repetition history but holds only the current position and no
    /// moves: cheap to make for each line a search explores.
    pub fn branch(&self) -> Game {
        Game {
            positions: vec![self.position().clone()],
            moves: Vec::new(),
            history: self.history.clone(),
            repeated: self.repeated.clone(),
        }
    }

    /// The moves played from the start position (or branch point).
    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// One entry per position from the start, the current one last.
    pub fn history(&self) -> &[HistoryEntry] {
        &self.history
    }

    /// How many times the current position has occurred (1 = first time).
    pub fn repetitions(&self) -> u8 {
        self.history.last().expect("non-empty").occurrence
    }

    /// Plays `mv`, which must be one of [`Game::legal_moves`].
    pub fn play(&mut self, mv: Move) {
        let next = self.position().play(mv);
        let n = self.history.len();
        let hash = next.hash();
        // Same side to move: every second entry back.
        let prev = (0..n).rev().skip(1).step_by(2).find(|&i| self.history[i].hash == hash);
        let (occurrence, prev) = match prev {
            Some(i) => (self.history[i].occurrence.saturating_add(1), i as u32),
            None => (1, 0),
        };
        if occurrence >= 2 {
            self.repeated.push(n as u32);
        }
        self.history.push(HistoryEntry { hash, in_check: next.in_check(), occurrence, prev });
        self.positions.push(next);
        self.moves.push(mv);
    }

    /// Takes back the last move; `None` at the start position (or branch
    /// point).
    pub fn undo(&mut self) -> Option<Move> {
        let mv = self.moves.pop()?;
        self.positions.pop();
        self.history.pop();
        if self.repeated.last() == Some(&(self.history.len() as u32)) {
            self.repeated.pop();
        }
        Some(mv)
    }

    /// The legal moves, including history rules (Mansindam's ban on a move
    /// that repeats a position a third time). It does not check whether the
    /// game is already over: see [`Game::outcome`].
    pub fn legal_moves(&self) -> MoveList {
        let mut moves = MoveList::with_capacity(128);
        self.generate_legal(&mut moves);
        moves
    }

    /// [`Game::legal_moves`] into a reused buffer.
    pub fn generate_legal(&self, out: &mut MoveList) {
        let pos = self.position();
        pos.generate_legal(out);
        if pos.tables().spec.repetition != Repetition::ThirdIsIllegal || self.repeated.is_empty() {
            return;
        }
        let banned: Vec<u64> = self.repeated_after_a_move().map(|e| e.hash).collect();
        if !banned.is_empty() {
            out.retain(|&mv| !banned.contains(&pos.hash_after(mv)));
        }
    }

    /// Why `mv` (legal in the position alone) is illegal because of the
    /// game history, if it is.
    pub fn repeats_third_time(&self, mv: Move) -> bool {
        let pos = self.position();
        pos.tables().spec.repetition == Repetition::ThirdIsIllegal && {
            let h = pos.hash_after(mv);
            self.repeated_after_a_move().any(|e| e.hash == h)
        }
    }

    /// The history entries of positions that occurred more than once and
    /// that a move from the current position could reach again: those with
    /// the other side to move, the other parity of index.
    fn repeated_after_a_move(&self) -> impl Iterator<Item = &HistoryEntry> {
        let parity = (self.history.len() - 1) % 2;
        self.repeated.iter().map(|&i| i as usize).filter(move |&i| i % 2 != parity).map(|i| &self.history[i])
    }

    /// The occurrence of a position that ends the game under the variant's
    /// repetition rule; `None` where a repetition never ends it (Mansindam
    /// forbids the move instead).
    fn ending_occurrence(&self) -> Option<u8> {
        match self.position().tables().spec.repetition {
            Repetition::FourfoldFirstPlayerLoses => Some(4),
            Repetition::ThirdSideToMoveLoses => Some(3),
            Repetition::ThirdIsIllegal => None,
        }
    }

    /// A move of `legal` (the game's legal moves) that ends the game at once
    /// by a repetition rule in the mover's favour: the third occurrence with
    /// the opponent to move (Pandemonium), the fourth played by gote
    /// (Minishogi), unless the mover's own perpetual check turns it round.
    /// Such a move need not give check, so the mate searches do not see it.
    pub fn repetition_win(&self, legal: &[Move]) -> Option<Move> {
        let needed = self.ending_occurrence()?;
        // Positions a move reaches for the `needed`th time.
        let ripe: Vec<u64> =
            self.repeated_after_a_move().filter(|e| e.occurrence >= needed - 1).map(|e| e.hash).collect();
        if ripe.is_empty() {
            return None;
        }
        let pos = self.position();
        let us = pos.side_to_move();
        let mut game = self.branch();
        legal.iter().copied().find(|&mv| {
            ripe.contains(&pos.hash_after(mv)) && {
                game.play(mv);
                let won = game.repetition_outcome().is_some_and(|o| o.winner == Some(us));
                game.undo();
                won
            }
        })
    }

    /// The result if the game is over, `None` while it goes on.
    pub fn outcome(&self) -> Option<Outcome> {
        self.outcome_before_movegen().or_else(|| {
            let mut moves = MoveList::new();
            self.generate_legal(&mut moves);
            moves.is_empty().then(|| self.no_move_outcome())
        })
    }

    /// The game ends that need no move generation: campmate and
    /// repetition. A position with no legal move ends the game too.
    pub fn outcome_before_movegen(&self) -> Option<Outcome> {
        let pos = self.position();
        if let Some(winner) = pos.campmate_winner() {
            return Some(Outcome::win(winner, EndReason::Campmate));
        }
        self.repetition_outcome()
    }

    /// The loss of the side to move when it has no legal move.
    pub fn no_move_outcome(&self) -> Outcome {
        let pos = self.position();
        let reason = if pos.in_check() { EndReason::Checkmate } else { EndReason::Stalemate };
        Outcome::win(!pos.side_to_move(), reason)
    }

    fn repetition_outcome(&self) -> Option<Outcome> {
        let rule = self.position().tables().spec.repetition;
        let needed = self.ending_occurrence()?;
        let last = self.history.len() - 1;
        if self.history[last].occurrence < needed {
            return None;
        }
        let mut first = last;
        while self.history[first].occurrence > 1 {
            first = self.history[first].prev as usize;
        }
        let checks: Vec<bool> = self.history[first..].iter().map(|e| e.in_check).collect();
        let side_now = self.position().side_to_move();
        let first_side = if (last - first).is_multiple_of(2) { side_now } else { !side_now };
        let [sente, gote] = perpetual_checkers(first_side, &checks);
        use EndReason::{PerpetualCheck, Repetition as Rep};
        let outcome = match (sente, gote) {
            (true, false) => Outcome::win(Color::Gote, PerpetualCheck),
            (false, true) => Outcome::win(Color::Sente, PerpetualCheck),
            (true, true) if rule == Repetition::ThirdSideToMoveLoses => {
                Outcome { winner: None, reason: PerpetualCheck }
            }
            _ => match rule {
                Repetition::FourfoldFirstPlayerLoses => Outcome::win(Color::Gote, Rep),
                _ => Outcome::win(!self.position().side_to_move(), Rep),
            },
        };
        Some(outcome)
    }
}
