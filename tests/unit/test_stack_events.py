"""Stack notifications on the in-process transport (fake://)."""

import threading

from nestedflow.messaging import events as stack_events


def test_in_process_waiters_are_woken_and_nothing_is_queued():
    """fake:// reaches only this process: changed() wakes the waiters
    itself, and publishes nothing for a listener that an embedded engine
    may never start (oslo.messaging's fake driver would keep it all)."""
    events = stack_events.StackEvents("fake://", safety_interval=60)
    done = threading.Event()
    woken = []
    waiter = threading.Thread(target=lambda: woken.append(
        events.wait("s1", done.is_set, timeout=30)))
    try:
        waiter.start()
        while "s1" not in events._waiters:  # registered: the next change wakes it
            waiter.join(0.01)
        done.set()
        for i in range(100):
            events.changed("s1" if i == 0 else f"other-{i}", "CREATE", "COMPLETE")
        waiter.join(30)
        # Woken by the change: the safety re-check is a minute away.
        assert woken == [True]
        exchanges = events._transport._driver._exchange_manager._exchanges
        assert not any(queue for exchange in exchanges.values()
                       for queue in exchange._topic_queues.values())
    finally:
        done.set()
        events.close()
