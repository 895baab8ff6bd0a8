//! A watcher's queue: the events a shard offered it and its response body
//! has not taken yet, bounded in events and in bytes.
//!
//! The sending half is the watcher's [`EventSink`]: an offer that would pass
//! either bound is refused (the hub then closes the watcher and counts it),
//! never waited for, so a stalled reader cannot hold up its shard. The
//! receiving half is a `Stream` of the queued events that ends once the
//! watcher is closed (the sender dropped) and the queue is drained.
//!
//! Bytes are counted as each event's frame would be written (prefix, object,
//! suffix). The objects are shared handles, so the bound is not what the
//! queue copies but what a slow reader keeps alive and has yet to receive.
//! One event is always admitted into an empty queue, however large: a
//! single object bigger than the bound would otherwise close every watcher
//! of it, again and again as they resume.
//!
//! Delivery rounds: a queue made with [`DeliveryRounds`] does not wake its
//! reader when an event arrives; it files the reader's waker in the shard's
//! ready list, and the runtime wakes the list a bounded number of readers at
//! a time, letting every other ready task run between rounds. One write
//! seen by 10,000 watchers then makes 10,000 readers ready over many short
//! rounds instead of putting 10,000 tasks ahead of the next request.
//!
//! Invariants: no I/O; single-threaded (the shard that holds the watcher);
//! `bytes` is always the sum of the queued events' frame lengths; a reader
//! with queued events is either being polled, or its waker is in the ready
//! list (never forgotten).

use super::{EventSink, WatchEvent, FRAME_SUFFIX};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

/// The bounds of one watcher's queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueBounds {
    pub events_max: usize,
    pub bytes_max: usize,
}

/// The bytes an event takes in a JSON watch stream.
pub fn frame_len(event: &WatchEvent) -> usize {
    event.event_type.frame_prefix().len() + event.object.len() + FRAME_SUFFIX.len()
}

#[derive(Default)]
struct Shared {
    events: VecDeque<WatchEvent>,
    bytes: usize,
    waker: Option<Waker>,
    sender_gone: bool,
    receiver_gone: bool,
}

/// The shard's end: offers events.
pub struct QueueSender {
    shared: Rc<RefCell<Shared>>,
    bounds: QueueBounds,
    rounds: Option<Rc<RefCell<DeliveryRounds>>>,
}

/// A shard's readers that have events waiting, woken in bounded rounds.
#[derive(Default)]
pub struct DeliveryRounds {
    ready: VecDeque<Waker>,
    /// The task that runs the rounds, waiting for a ready reader.
    pacer: Option<Waker>,
    rounds: u64,
}

impl DeliveryRounds {
    fn defer(&mut self, waker: Waker) {
        self.ready.push_back(waker);
        if let Some(pacer) = self.pacer.take() {
            pacer.wake();
        }
    }

    /// Ready when some reader waits for a round (the pacer's wait).
    pub fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.ready.is_empty() {
            self.pacer = Some(cx.waker().clone());
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    }

    /// Takes up to `readers_max` waiting readers' wakers, oldest first, to
    /// be woken (outside this borrow: a waker may run code that defers).
    pub fn take_round(&mut self, readers_max: usize) -> Vec<Waker> {
        let n = readers_max.max(1).min(self.ready.len());
        if n > 0 {
            self.rounds += 1;
        }
        self.ready.drain(..n).collect()
    }

    /// Readers waiting for a round now, and rounds run so far.
    pub fn stats(&self) -> (usize, u64) {
        (self.ready.len(), self.rounds)
    }
}

/// The response body's end: a stream of the queued events.
pub struct QueueReceiver {
    shared: Rc<RefCell<Shared>>,
}

/// A new empty queue with these bounds.
pub fn watch_queue(bounds: QueueBounds) -> (QueueSender, QueueReceiver) {
    let shared = Rc::new(RefCell::new(Shared::default()));
    (QueueSender { shared: shared.clone(), bounds, rounds: None }, QueueReceiver { shared })
}

/// A new empty queue whose reader is woken in the shard's delivery rounds.
pub fn watch_queue_in_rounds(bounds: QueueBounds, rounds: Rc<RefCell<DeliveryRounds>>) -> (QueueSender, QueueReceiver) {
    let shared = Rc::new(RefCell::new(Shared::default()));
    (QueueSender { shared: shared.clone(), bounds, rounds: Some(rounds) }, QueueReceiver { shared })
}

impl QueueSender {
    /// Events and bytes queued now.
    pub fn queued(&self) -> (usize, usize) {
        let shared = self.shared.borrow();
        (shared.events.len(), shared.bytes)
    }
}

impl EventSink for QueueSender {
    fn offer(&mut self, event: WatchEvent) -> bool {
        let mut shared = self.shared.borrow_mut();
        if shared.receiver_gone {
            return false;
        }
        let len = frame_len(&event);
        let empty = shared.events.is_empty();
        if shared.events.len() >= self.bounds.events_max
            || (!empty && shared.bytes.saturating_add(len) > self.bounds.bytes_max)
        {
            return false;
        }
        shared.bytes += len;
        shared.events.push_back(event);
        if let Some(waker) = shared.waker.take() {
            match &self.rounds {
                Some(rounds) => rounds.borrow_mut().defer(waker),
                None => waker.wake(),
            }
        }
        true
    }
}

impl Drop for QueueSender {
    fn drop(&mut self) {
        let mut shared = self.shared.borrow_mut();
        shared.sender_gone = true;
        if let Some(waker) = shared.waker.take() {
            waker.wake();
        }
    }
}

impl futures_util::Stream for QueueReceiver {
    type Item = WatchEvent;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<WatchEvent>> {
        let mut shared = self.shared.borrow_mut();
        if let Some(event) = shared.events.pop_front() {
            shared.bytes -= frame_len(&event);
            return Poll::Ready(Some(event));
        }
        if shared.sender_gone {
            return Poll::Ready(None);
        }
        shared.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl Drop for QueueReceiver {
    fn drop(&mut self) {
        let mut shared = self.shared.borrow_mut();
        shared.receiver_gone = true;
        shared.events.clear();
        shared.bytes = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::Revision;
    use crate::watch::EventType;
    use bytes::Bytes;
    use futures_util::StreamExt;

    fn event(revision: u64, object_bytes: usize) -> WatchEvent {
        WatchEvent {
            event_type: EventType::Modified,
            revision: Revision(revision),
            object: Bytes::from(vec![b'x'; object_bytes]),
            source: None,
        }
    }

    fn overhead() -> usize {
        frame_len(&event(0, 0))
    }

    #[test]
    fn the_events_bound_refuses_the_event_past_it() {
        let (mut sender, mut receiver) = watch_queue(QueueBounds { events_max: 3, bytes_max: usize::MAX });
        assert!((1..=3).all(|r| sender.offer(event(r, 10))));
        assert!(!sender.offer(event(4, 10)), "a fourth event is past the bound");
        assert_eq!(sender.queued(), (3, 3 * (overhead() + 10)));
        // Taking one makes room for one.
        let first = futures_lite::future::block_on(receiver.next()).unwrap();
        assert_eq!(first.revision, Revision(1));
        assert!(sender.offer(event(4, 10)));
        assert!(!sender.offer(event(5, 10)));
    }

    #[test]
    fn the_bytes_bound_refuses_the_event_past_it() {
        let frame = overhead() + 100;
        let bound = 4 * frame - 1;
        let (mut sender, mut receiver) = watch_queue(QueueBounds { events_max: 1000, bytes_max: bound });
        assert!((1..=3).all(|r| sender.offer(event(r, 100))));
        assert!(!sender.offer(event(4, 100)), "one byte past the bound");
        assert!(sender.offer(event(4, 99)), "exactly at the bound");
        assert_eq!(sender.queued(), (4, bound));
        assert!(!sender.offer(event(5, 0)));
        // Taking an event frees its bytes.
        let first = futures_lite::future::block_on(receiver.next()).unwrap();
        assert_eq!(first.revision, Revision(1));
        assert_eq!(sender.queued(), (3, bound - frame));
        assert!(sender.offer(event(5, 100)));
        drop(sender);
        let drained: Vec<u64> = futures_lite::future::block_on(receiver.map(|e| e.revision.0).collect());
        assert_eq!(drained, [2, 3, 4, 5]);
    }

    #[test]
    fn one_event_larger_than_the_bytes_bound_enters_an_empty_queue_only() {
        let (mut sender, receiver) = watch_queue(QueueBounds { events_max: 10, bytes_max: 50 });
        assert!(sender.offer(event(1, 500)), "an empty queue takes any one event");
        assert!(!sender.offer(event(2, 1)), "past the bound: refused");
        drop(receiver);
        assert!(!sender.offer(event(3, 1)), "the reader went away");
    }

    #[test]
    fn the_stream_ends_after_the_sender_is_dropped_and_the_queue_drained() {
        let (mut sender, receiver) = watch_queue(QueueBounds { events_max: 10, bytes_max: 1 << 20 });
        assert!(sender.offer(event(1, 1)) && sender.offer(event(2, 1)));
        drop(sender);
        let revisions: Vec<u64> = futures_lite::future::block_on(receiver.map(|e| e.revision.0).collect());
        assert_eq!(revisions, [1, 2]);
    }

    /// Counts wakes, to see which readers a round woke.
    struct CountWake(std::sync::atomic::AtomicUsize);
    impl std::task::Wake for CountWake {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }

    #[test]
    fn readers_in_rounds_are_woken_a_bounded_number_at_a_time_in_order() {
        let rounds = Rc::new(RefCell::new(DeliveryRounds::default()));
        let bounds = QueueBounds { events_max: 10, bytes_max: 1 << 20 };
        let mut queues = Vec::new();
        let mut counters = Vec::new();
        for _ in 0..5 {
            let (sender, mut receiver) = watch_queue_in_rounds(bounds, rounds.clone());
            let counter = std::sync::Arc::new(CountWake(Default::default()));
            let waker = Waker::from(counter.clone());
            let mut cx = Context::from_waker(&waker);
            assert!(receiver.poll_next_unpin(&mut cx).is_pending());
            queues.push((sender, receiver));
            counters.push(counter);
        }
        let woken = |i: usize| counters[i].0.load(std::sync::atomic::Ordering::SeqCst);
        let pacer = std::sync::Arc::new(CountWake(Default::default()));
        let pacer_waker = Waker::from(pacer.clone());
        assert!(rounds.borrow_mut().poll_ready(&mut Context::from_waker(&pacer_waker)).is_pending());
        // Offers wake nobody but the pacer; a second offer to a reader
        // already in the list does not file it twice.
        for (sender, _) in queues.iter_mut().rev() {
            assert!(sender.offer(event(1, 10)));
            assert!(sender.offer(event(2, 10)));
        }
        assert!((0..5).all(|i| woken(i) == 0));
        assert_eq!(pacer.0.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert_eq!(rounds.borrow().stats(), (5, 0));
        let first = rounds.borrow_mut().take_round(2);
        first.into_iter().for_each(Waker::wake);
        assert_eq!((0..5).map(woken).collect::<Vec<_>>(), [0, 0, 0, 1, 1], "the two offered first");
        let rest = rounds.borrow_mut().take_round(10);
        assert_eq!(rest.len(), 3);
        rest.into_iter().for_each(Waker::wake);
        assert!((0..5).all(|i| woken(i) == 1));
        assert_eq!(rounds.borrow().stats(), (0, 2));
        assert!(rounds.borrow_mut().take_round(10).is_empty());
        assert_eq!(rounds.borrow().stats(), (0, 2), "an empty round is not a round");
        // Every event is still there for its reader, in order.
        for (sender, receiver) in queues {
            drop(sender);
            let revisions: Vec<u64> = futures_lite::future::block_on(receiver.map(|e| e.revision.0).collect());
            assert_eq!(revisions, [1, 2]);
        }
    }
}
