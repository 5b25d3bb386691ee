//! A workload whose event does nothing, to measure the engine's own cost
//! per event (what `bench/engine.sh` compares with sysbench's empty event).

use dbmeter_engine::{EventError, Flow, Tally, User, UserFactory};

pub struct NoopUser;

impl User for NoopUser {
    #[inline]
    fn event(&mut self, tally: &mut Tally) -> Result<Flow, EventError> {
        std::hint::black_box(tally);
        Ok(Flow::Continue)
    }
}

pub struct NoopFactory;

impl UserFactory for NoopFactory {
    fn create(&self, _user_id: usize) -> Result<Box<dyn User>, String> {
        Ok(Box::new(NoopUser))
    }
}
