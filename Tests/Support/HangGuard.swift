import Testing

extension Trait where Self == TimeLimitTrait {
    /// The time limit of a test whose own waits are seconds: a guard against a hang, not a
    /// measure. Five minutes, not one: the limit counts the wall time the test waits for the
    /// shared pool too, and on 2 cores the tests that block a pool thread while a child process
    /// runs held both threads for two minutes at a time, so tests that were only waiting their
    /// turn failed as hung. A real hang still ends well inside the run's deadline (scripts/test).
    public static var hangGuard: Self { .timeLimit(.minutes(5)) }
}
