//! A workload whose event does nothing, to measure the engine's own cost
//! per event (what `bench/engine.sh` compares with sysbench's empty event).

use dbmeter_engine::{EventError, Tally, User, UserFactory};

pub struct NoopUser;

impl User for NoopUser {
    #[inline]
    async fn event(&mut self, tally: &mut Tally) -> Result<(), EventError> {
        std::hint::black_box(tally);
        Ok(())
    }
}

pub struct NoopFactory;

impl UserFactory for NoopFactory {
    type User = NoopUser;
    async fn create(&self, _user_id: usize) -> Result<NoopUser, String> {
        Ok(NoopUser)
    }
}
