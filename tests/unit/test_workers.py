"""The traversal worker pool: a bound on running actions, not on waiting ones."""

import threading

from nestedflow.pools import workers

TIMEOUT = 10


def test_at_most_active_actions_run_and_a_waiting_one_frees_its_worker():
    pool = workers.WorkerPool(active=2, waits=2)
    running, peak, lock = [0], [0], threading.Lock()
    release = threading.Event()
    entered = threading.Semaphore(0)

    def action(wait_inside=False):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        entered.release()
        try:
            if wait_inside:
                # Counted as running only while it holds a worker: before it
                # gives the worker up and once it has it back.
                with lock:
                    running[0] -= 1
                with workers.waiting():
                    assert release.wait(TIMEOUT)
                with lock:
                    running[0] += 1
                    peak[0] = max(peak[0], running[0])
            else:
                assert release.wait(TIMEOUT)
        finally:
            with lock:
                running[0] -= 1

    try:
        # A waiting action and one running: the second worker is still busy,
        # and the waiting one's worker lets a third action start.
        futures = [pool.submit(action, wait_inside=True), pool.submit(action)]
        assert entered.acquire(timeout=TIMEOUT) and entered.acquire(timeout=TIMEOUT)
        third = pool.submit(action)
        assert entered.acquire(timeout=TIMEOUT), "the waiting action kept its worker"
        # With two running, a fourth must wait for a worker.
        fourth = pool.submit(action)
        assert not entered.acquire(timeout=0.3)
        release.set()
        for future in [*futures, third, fourth]:
            future.result(timeout=TIMEOUT)
        assert entered.acquire(timeout=TIMEOUT)
        assert peak[0] == 2
    finally:
        release.set()
        pool.shutdown(wait=True)


def test_waiting_outside_a_pool_does_nothing():
    with workers.waiting():
        pass


def _thread_of(pool):
    return pool.submit(threading.get_ident).result(TIMEOUT)


def test_a_finished_runs_pool_serves_the_next_run_of_its_size():
    cache = workers.PoolCache(keep=2)
    try:
        first = cache.take(2, 1)
        thread = _thread_of(first)
        cache.give_back(first, 2, 1)
        # Same size: the same pool, its thread already started.
        again = cache.take(2, 1)
        assert again is first and _thread_of(again) == thread
        # Another size: a pool of its own.
        other = cache.take(3, 0)
        assert other is not first and other._max_workers == 3
        cache.give_back(again, 2, 1)
        cache.give_back(other, 3, 0)
    finally:
        cache.close()
    assert not first.alive and not other.alive


def test_a_pool_with_an_action_in_flight_is_not_kept():
    cache = workers.PoolCache()
    release = threading.Event()
    try:
        busy = cache.take(1)
        future = busy.submit(release.wait, TIMEOUT)
        cache.give_back(busy, 1)
        assert not busy.alive  # shut down: its late action must not meet another run's
        assert cache.take(1) is not busy
    finally:
        release.set()
        cache.close()
    assert future.result(TIMEOUT) is True


def test_idle_pools_are_bounded_in_number_and_time():
    cache = workers.PoolCache(keep=2)
    pools = [cache.take(1) for _ in range(3)]
    for pool in pools:
        cache.give_back(pool, 1)
    assert [p.alive for p in pools] == [False, True, True]  # the oldest went
    stale = workers.PoolCache(idle_for=0)
    pool = stale.take(1)
    stale.give_back(pool, 1)
    assert stale.take(1) is not pool and not pool.alive
    cache.close()
    stale.close()
    late = workers.WorkerPool(1)
    cache.give_back(late, 1)  # after close: stopped, not kept
    assert not late.alive and not any(p.alive for p in pools)


def test_parked_actions_free_their_thread_and_resume_on_it():
    """An action that parks gives its thread to others (nestedflow.pools.parking)."""
    pool = workers.WorkerPool(active=1, waits=0)
    order = []

    def parks(name):
        order.append(f"{name} start")
        thread = threading.current_thread()
        workers.park(0.2)
        assert threading.current_thread() is thread
        order.append(f"{name} end")
        return name

    try:
        futures = [pool.submit(parks, name) for name in ("a", "b", "c")]
        assert [f.result(timeout=TIMEOUT) for f in futures] == ["a", "b", "c"]
        # All three started on one thread before any of them ended.
        assert order[:3] == ["a start", "b start", "c start"]
        assert pool.threads == 1
    finally:
        pool.shutdown(wait=True)


def test_an_idle_pool_thread_keeps_nothing_of_its_last_task():
    """The task's arguments reach its engine and a whole traversal's flow:
    a thread waiting for its next task must not keep them alive."""
    import time
    import weakref

    class Flow:
        pass

    pool = workers.WorkerPool(2)
    try:
        flow = Flow()
        gone = weakref.ref(flow)
        assert pool.submit(lambda f: f is not None, flow).result(5)
        del flow
        deadline = time.monotonic() + 5
        while gone() is not None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert gone() is None
    finally:
        pool.shutdown()
