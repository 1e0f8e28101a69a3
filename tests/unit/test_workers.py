"""The traversal worker pool: a bound on running actions, not on waiting ones."""

import threading

from nestedflow.flows import workers

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
