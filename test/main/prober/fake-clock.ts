// The probe manager's tests use the shared fake clock (test/fakes/fake-clock.ts): it is a SchedulerClock too.
export { FakeClock, flush } from '../../fakes/fake-clock.js';
