//! Single-threaded wake-ups: futures that wait for a condition on the log's
//! state, woken when the state that the condition reads may have changed.
//!
//! Invariants: a waiting future is registered at most once (by id) and removes
//! itself when it completes or is dropped, so the list never outgrows the
//! number of live waiters; a condition is always re-checked after a wake-up.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

/// A list of tasks waiting for some state to change.
#[derive(Default)]
pub struct Notify {
    waiters: RefCell<BTreeMap<u64, Waker>>,
    next_id: Cell<u64>,
}

impl Notify {
    /// Wakes every waiter; each re-checks its condition.
    pub fn notify_all(&self) {
        let waiters = std::mem::take(&mut *self.waiters.borrow_mut());
        for waker in waiters.into_values() {
            waker.wake();
        }
    }

    /// Resolves once `condition()` is true (checked now and after each wake-up).
    pub fn wait_until<F: FnMut() -> bool + Unpin>(&self, condition: F) -> WaitUntil<'_, F> {
        WaitUntil { notify: self, condition, id: None }
    }
}

pub struct WaitUntil<'a, F> {
    notify: &'a Notify,
    condition: F,
    id: Option<u64>,
}

impl<F: FnMut() -> bool + Unpin> Future for WaitUntil<'_, F> {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if (self.condition)() {
            if let Some(id) = self.id.take() {
                self.notify.waiters.borrow_mut().remove(&id);
            }
            return Poll::Ready(());
        }
        let id = match self.id {
            Some(id) => id,
            None => {
                let id = self.notify.next_id.get();
                self.notify.next_id.set(id + 1);
                self.id = Some(id);
                id
            }
        };
        self.notify.waiters.borrow_mut().insert(id, cx.waker().clone());
        Poll::Pending
    }
}

impl<F> Drop for WaitUntil<'_, F> {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.notify.waiters.borrow_mut().remove(&id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

    #[test]
    fn waits_until_notified_and_condition_holds() {
        let notify = Rc::new(Notify::default());
        let flag = Rc::new(Cell::new(false));
        let mut fut = Box::pin(notify.wait_until({
            let flag = flag.clone();
            move || flag.get()
        }));
        let waker = futures_util::task::noop_waker();
        let mut cx = Context::from_waker(&waker);
        assert!(fut.as_mut().poll(&mut cx).is_pending());
        notify.notify_all();
        assert!(fut.as_mut().poll(&mut cx).is_pending());
        flag.set(true);
        notify.notify_all();
        assert!(fut.as_mut().poll(&mut cx).is_ready());
        drop(fut);
        assert!(notify.waiters.borrow().is_empty());
    }
}
