//! Temporary in-memory stand-in with the embedded log's API (replaced by the
//! durable implementation on merge).

use super::*;
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, VecDeque};

pub struct LogOptions {
    pub segment_bytes_max: u64,
    pub snapshot_every_records: u64,
    pub batch_records_max: usize,
    pub batch_bytes_max: usize,
    pub record_bytes_max: usize,
    pub tail_entries_max: usize,
}

pub struct Recovered {
    pub revision: Revision,
    pub live: Vec<KeyValue>,
}

pub struct EmbeddedLog<D: LogDirectory> {
    _dir: D,
    revision: Cell<u64>,
    index: RefCell<BTreeMap<Bytes, KeyValue>>,
    tail: RefCell<VecDeque<Entry>>,
    wakers: RefCell<Vec<std::task::Waker>>,
    closed: Cell<bool>,
}

impl<D: LogDirectory> EmbeddedLog<D> {
    pub async fn open(dir: D, _options: LogOptions) -> Result<(Self, Recovered), LogError> {
        Ok((
            EmbeddedLog {
                _dir: dir,
                revision: Cell::new(0),
                index: RefCell::default(),
                tail: RefCell::default(),
                wakers: RefCell::default(),
                closed: Cell::new(false),
            },
            Recovered { revision: Revision(0), live: vec![] },
        ))
    }
    pub async fn append(&self, p: Proposal) -> Result<Entry, AppendError> {
        if self.closed.get() {
            return Err(AppendError::Unavailable("closed".into()));
        }
        let mut index = self.index.borrow_mut();
        let current = index.get(&p.key).cloned();
        match (p.precondition, &current) {
            (Precondition::Absent, Some(c)) => return Err(AppendError::Conflict { current: Some(c.mod_revision) }),
            (Precondition::ModRevision(r), Some(c)) if c.mod_revision != r => {
                return Err(AppendError::Conflict { current: Some(c.mod_revision) })
            }
            (Precondition::ModRevision(_), None) => return Err(AppendError::Conflict { current: None }),
            _ => {}
        }
        let revision = Revision(self.revision.get() + 1);
        self.revision.set(revision.0);
        let previous = current.as_ref().map(|c| PreviousValue { mod_revision: c.mod_revision, create_revision: c.create_revision, value: c.value.clone() });
        let create_revision = match (&p.operation, &current) {
            (_, Some(c)) => c.create_revision,
            (_, None) => revision,
        };
        match &p.operation {
            Operation::Put(v) => {
                index.insert(p.key.clone(), KeyValue { key: p.key.clone(), value: v.clone(), create_revision, mod_revision: revision });
            }
            Operation::Delete => {
                index.remove(&p.key);
            }
        }
        let entry = Entry { revision, key: p.key, operation: p.operation, create_revision, previous };
        self.tail.borrow_mut().push_back(entry.clone());
        for w in self.wakers.borrow_mut().drain(..) {
            w.wake();
        }
        Ok(entry)
    }
    pub fn committed_revision(&self) -> Revision {
        Revision(self.revision.get())
    }
    pub async fn wait_committed(&self, after: Revision) -> Result<(), LogError> {
        std::future::poll_fn(|cx| {
            if self.revision.get() > after.0 {
                std::task::Poll::Ready(Ok(()))
            } else if self.closed.get() {
                std::task::Poll::Ready(Err(LogError::Closed))
            } else {
                self.wakers.borrow_mut().push(cx.waker().clone());
                std::task::Poll::Pending
            }
        })
        .await
    }
    pub fn read_committed(&self, after: Revision, max_entries: usize) -> Result<Vec<Entry>, LogError> {
        Ok(self.tail.borrow().iter().filter(|e| e.revision > after).take(max_entries).cloned().collect())
    }
    pub fn release(&self, up_to: Revision) {
        self.tail.borrow_mut().retain(|e| e.revision > up_to);
    }
    pub async fn snapshot_if_due(&self) -> Result<bool, LogError> {
        Ok(false)
    }
    pub async fn close(&self) -> Result<(), LogError> {
        self.closed.set(true);
        for w in self.wakers.borrow_mut().drain(..) {
            w.wake();
        }
        Ok(())
    }
}
