//! The library's own rayon pool for the CPU side of a proving call (used by
//! the pipeline, and by the GPU backend to place the G2 MSMs).
//!
//! The CPU thread's split-MSM plans and G2 MSMs run here, so that they make
//! progress when the caller is itself a worker of the global pool: phase 2
//! waits for the plans while holding the compute lock, and if the plans'
//! parallel work were queued on the global pool, a caller occupying its only
//! (or every) worker would wait forever.
//!
//! Its size is rayon's default (`RAYON_NUM_THREADS`, else every CPU); with
//! the `curio-fork` feature, `CUZK_GPU_THREADS` sets it, as it sizes Curio's
//! fork's pool for the same work ([`crate::curio::gpu_threads`]).

fn cpu_pool() -> &'static Option<rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        let builder = rayon::ThreadPoolBuilder::new().thread_name(|i| format!("supraseal-c2-cpu-{i}"));
        match crate::curio::gpu_threads() {
            Some(n) => builder.num_threads(n),
            None => builder,
        }
        .build()
        .ok()
    })
}

/// Threads of the pool that runs the CPU side of a call (the split-MSM
/// plans and, on the CPU, the G2 MSMs).
pub fn cpu_threads() -> usize {
    cpu_pool().as_ref().map_or(1, |p| p.current_num_threads())
}

/// Whether the pool was built (threads could be started). Without it the
/// CPU side of a call runs on the calling thread and rayon's global pool.
pub(crate) fn has_cpu_pool() -> bool {
    cpu_pool().is_some()
}

/// The pool of the deferred scalar checks (`pipeline::checks`): a quarter
/// of the CPU pool's threads (at least 1, at most 8). Its own threads, so
/// that circuit i+1's check, which phase 2 waits for before that circuit's
/// quotient, is not queued behind the call's split-MSM preparation in the
/// CPU pool (at 2^24 it was: phase 2 waited 1.1 s for it on the H200 host).
fn check_pool() -> &'static Option<rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .thread_name(|i| format!("supraseal-c2-check-{i}"))
            .num_threads((cpu_threads() / 4).clamp(1, 8))
            .build()
            .ok()
    })
}

/// Runs `f` on the check pool, else (no threads could be started there) on
/// the CPU pool ([`in_cpu_pool`]).
pub(crate) fn in_check_pool<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    match check_pool() {
        Some(p) => p.install(f),
        None => in_cpu_pool(f),
    }
}

/// A piece of host work for [`on_plain_threads`].
pub(crate) type Task<'a> = Box<dyn FnOnce() + Send + 'a>;

/// Runs every task on plain scoped threads, at most [`cpu_threads`] of them
/// (contiguous groups of tasks, each group in order on one thread), and
/// returns once all have run; a group whose thread cannot be started runs on
/// the calling thread, and a task's panic is resumed here. For parallel host
/// work on the thread that holds a GPU's compute lock: rayon there could run
/// another call's job while it waits (a caller inside a rayon pool), and that
/// job would wait for the lock held further up the same stack.
pub(crate) fn on_plain_threads<'a>(tasks: Vec<Task<'a>>) {
    let groups = tasks.len().min(cpu_threads()).max(1);
    let per = tasks.len().div_ceil(groups).max(1);
    let mut tasks = tasks.into_iter();
    let groups: Vec<Task<'a>> = std::iter::from_fn(|| {
        let group: Vec<Task<'a>> = tasks.by_ref().take(per).collect();
        (!group.is_empty()).then(|| Box::new(move || group.into_iter().for_each(|t| t())) as Task<'a>)
    })
    .collect();
    std::thread::scope(|scope| {
        let mut spawned = Vec::with_capacity(groups.len());
        for task in groups {
            // Shared with the thread, so that it is still here to run when
            // the thread cannot be started (the closure is dropped then).
            let slot = std::sync::Arc::new(std::sync::Mutex::new(Some(task)));
            let theirs = slot.clone();
            let take = |s: &std::sync::Mutex<Option<Task<'a>>>| s.lock().unwrap_or_else(|p| p.into_inner()).take();
            let run = move || {
                if let Some(t) = take(&theirs) {
                    t()
                }
            };
            match std::thread::Builder::new().name("supraseal-c2-host".into()).spawn_scoped(scope, run) {
                Ok(t) => spawned.push(t),
                Err(_) => {
                    if let Some(t) = take(&slot) {
                        t()
                    }
                }
            }
        }
        for t in spawned {
            t.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        }
    })
}

/// Runs `f` on the pool.
pub(crate) fn in_cpu_pool<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    match cpu_pool() {
        Some(p) => p.install(f),
        // Could not start threads: run here (a caller inside a saturated
        // global pool may then wait).
        None => f(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_threads_run_every_task_once_on_at_most_the_pool_size() {
        for n in [0usize, 1, 3, 64] {
            let ran: Vec<std::sync::Mutex<Option<std::thread::ThreadId>>> = (0..n).map(|_| Default::default()).collect();
            let tasks: Vec<Task<'_>> = ran
                .iter()
                .map(|slot| Box::new(move || assert!(slot.lock().unwrap().replace(std::thread::current().id()).is_none())) as Task<'_>)
                .collect();
            on_plain_threads(tasks);
            let mut threads: Vec<_> = ran.iter().map(|s| s.lock().unwrap().expect("every task ran")).collect();
            threads.sort_by_key(|t| format!("{t:?}"));
            threads.dedup();
            assert!(threads.len() <= cpu_threads().max(1), "{n} tasks on {} threads, pool of {}", threads.len(), cpu_threads());
        }
    }
}
