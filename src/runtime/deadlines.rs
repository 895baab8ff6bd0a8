//! A shard's deadlines (`Backend::sleep`: watch timeouts, the namespace
//! controller's and garbage collector's waits): one ordered map of wakers
//! and one timer task per shard, instead of a glommio timer per wait.
//!
//! Every watch has a deadline (its `timeoutSeconds`, or 30 to 60 minutes).
//! A glommio `sleep` costs three allocations and an entry in the reactor's
//! timer map, about 290 bytes, which for 10,000 idle watches was more than
//! a third of what each cost. Here a [`Deadline`] is its instant and a key
//! (held inline where it is awaited), plus one map entry while it is polled.
//!
//! Invariants: a [`Deadline`] is ready once its instant has passed, and the
//! task that waits on it is woken then (the timer task sleeps until the
//! earliest registered instant, and is woken when an earlier one arrives);
//! a dropped deadline leaves nothing behind. Runs on its shard only.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

/// The deadlines waited on in one shard.
#[derive(Default)]
pub struct Deadlines {
    inner: RefCell<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Who waits for which instant (the key tells equal instants apart).
    waiting: BTreeMap<(Instant, u64), Waker>,
    next_key: u64,
    /// The instant the timer task sleeps until (`None`: no deadline).
    timer_at: Option<Instant>,
    /// The timer task, waiting for an earlier deadline than `timer_at`.
    timer_task: Option<Waker>,
    /// An earlier deadline arrived since the timer task last looked.
    earlier: bool,
}

impl Deadlines {
    /// A future ready at `at`.
    pub fn until(self: &Rc<Self>, at: Instant) -> Deadline {
        Deadline { at, key: None, deadlines: self.clone() }
    }

    /// Removes and returns the wakers of the deadlines due at `now`, and
    /// the next instant to wake up at.
    fn take_due(&self, now: Instant) -> (Vec<Waker>, Option<Instant>) {
        let mut inner = self.inner.borrow_mut();
        let mut due = Vec::new();
        while let Some(entry) = inner.waiting.first_entry() {
            if entry.key().0 > now {
                break;
            }
            due.push(entry.remove());
        }
        let next = inner.waiting.first_key_value().map(|(k, _)| k.0);
        inner.timer_at = next;
        inner.earlier = false;
        (due, next)
    }

    /// Deadlines registered now.
    #[cfg(test)]
    fn waiting(&self) -> usize {
        self.inner.borrow().waiting.len()
    }
}

/// Runs a shard's deadlines: wakes each waiter when its instant has
/// passed. Spawned once per shard; never returns.
pub async fn run(deadlines: Rc<Deadlines>) {
    loop {
        let (due, next) = deadlines.take_due(Instant::now());
        for waker in due {
            waker.wake();
        }
        // Sleep until the next deadline, or until an earlier one arrives.
        let earlier = std::future::poll_fn(|cx| {
            let mut inner = deadlines.inner.borrow_mut();
            if inner.earlier {
                return Poll::Ready(());
            }
            inner.timer_task = Some(cx.waker().clone());
            Poll::Pending
        });
        match next {
            Some(at) => {
                let sleep = glommio::timer::sleep(at.saturating_duration_since(Instant::now()));
                futures_lite::future::or(earlier, sleep).await;
            }
            None => earlier.await,
        }
    }
}

/// A future ready at an instant, woken by its shard's timer task.
pub struct Deadline {
    at: Instant,
    /// Registered in the map under `(at, key)`.
    key: Option<u64>,
    deadlines: Rc<Deadlines>,
}

impl Future for Deadline {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if Instant::now() >= self.at {
            self.unregister();
            return Poll::Ready(());
        }
        let at = self.at;
        let deadlines = self.deadlines.clone();
        let mut inner = deadlines.inner.borrow_mut();
        match self.key {
            Some(key) => match inner.waiting.get_mut(&(at, key)) {
                Some(waker) => {
                    if !waker.will_wake(cx.waker()) {
                        *waker = cx.waker().clone();
                    }
                }
                None => {
                    // Only a due deadline is taken out of the map.
                    self.key = None;
                    return Poll::Ready(());
                }
            },
            None => {
                let key = inner.next_key;
                inner.next_key += 1;
                inner.waiting.insert((at, key), cx.waker().clone());
                self.key = Some(key);
                if inner.timer_at.is_none_or(|t| at < t) {
                    inner.timer_at = Some(at);
                    inner.earlier = true;
                    if let Some(task) = inner.timer_task.take() {
                        task.wake();
                    }
                }
            }
        }
        Poll::Pending
    }
}

impl Deadline {
    fn unregister(&mut self) {
        if let Some(key) = self.key.take() {
            if let Ok(mut inner) = self.deadlines.inner.try_borrow_mut() {
                inner.waiting.remove(&(self.at, key));
            }
        }
    }
}

impl Drop for Deadline {
    fn drop(&mut self) {
        self.unregister();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::Wake;
    use std::time::Duration;

    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn deadlines_register_once_wake_when_due_and_leave_nothing_when_dropped() {
        let deadlines = Rc::new(Deadlines::default());
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        let mut cx = Context::from_waker(&waker);
        let now = Instant::now();
        let mut late = Box::pin(deadlines.until(now + Duration::from_secs(3600)));
        let mut soon = Box::pin(deadlines.until(now + Duration::from_secs(10)));
        let mut past = Box::pin(deadlines.until(now));
        assert!(past.as_mut().poll(&mut cx).is_ready(), "a past instant is ready at once");
        for _ in 0..3 {
            assert!(late.as_mut().poll(&mut cx).is_pending());
            assert!(soon.as_mut().poll(&mut cx).is_pending());
        }
        assert_eq!(deadlines.waiting(), 2, "polled again, a deadline keeps one entry");
        // The timer task's pass 20 s from now: `soon` is due, `late` is next.
        let (due, next) = deadlines.take_due(now + Duration::from_secs(20));
        assert_eq!(due.len(), 1);
        due.into_iter().for_each(Waker::wake);
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
        assert_eq!(next, Some(now + Duration::from_secs(3600)));
        assert!(soon.as_mut().poll(&mut cx).is_ready());
        assert_eq!(deadlines.waiting(), 1);
        drop(late);
        assert_eq!(deadlines.waiting(), 0, "a dropped deadline is unregistered");
    }

    #[test]
    fn an_earlier_deadline_wakes_the_timer_task() {
        let deadlines = Rc::new(Deadlines::default());
        let timer = Arc::new(Count(AtomicUsize::new(0)));
        deadlines.inner.borrow_mut().timer_task = Some(Waker::from(timer.clone()));
        deadlines.inner.borrow_mut().timer_at = Some(Instant::now() + Duration::from_secs(60));
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        let mut cx = Context::from_waker(&waker);
        let mut later = Box::pin(deadlines.until(Instant::now() + Duration::from_secs(120)));
        assert!(later.as_mut().poll(&mut cx).is_pending());
        assert_eq!(timer.0.load(Ordering::SeqCst), 0, "a later deadline does not disturb the timer");
        let mut sooner = Box::pin(deadlines.until(Instant::now() + Duration::from_secs(30)));
        assert!(sooner.as_mut().poll(&mut cx).is_pending());
        assert_eq!(timer.0.load(Ordering::SeqCst), 1, "an earlier one wakes it");
        assert!(deadlines.inner.borrow().earlier);
    }
}
