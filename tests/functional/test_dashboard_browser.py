"""The dashboard in a real headless browser: Debian's chromium driven by
Playwright (tools/test.sh installs chromium; Playwright never downloads a
browser). Everything asserted is read from the page itself.

1. A 200-resource stack with a nested stack and a failing post-check,
   created through two conductor processes: node states change on the open
   page without a reload, the failed resource and its check's message show
   without a click, the final counts are the database's.
2. A 2,000-resource stack's page: time to first render of the graph and
   the page's memory, measured in the browser, printed.
3. The screenshots of doc/source/dashboard.rst, written by these tests.
"""

import contextlib
import os
import pathlib
import uuid

import pytest
from conductor_cluster import TRANSPORT_URL, wait_for

from nestedflow.conf import CONF
from nestedflow.dashboard import server
from nestedflow.messaging import transport

CHROMIUM = os.environ.get("NESTEDFLOW_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
DOCS = pathlib.Path(__file__).resolve().parents[2] / "doc" / "source"
VIEWPORT = {"width": 1400, "height": 900}


@pytest.fixture(scope="module")
def browser():
    if not os.path.exists(CHROMIUM):
        raise RuntimeError(f"no chromium at {CHROMIUM}: tools/test.sh installs Debian's "
                           "(apt-get install -y --no-install-recommends chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport=VIEWPORT)
    opened = context.new_page()
    errors = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    yield opened
    context.close()
    assert errors == []  # no script error on any page


@contextlib.contextmanager
def served(page, **kwargs):
    application = server.make_app(CONF, **kwargs)
    running = server.Server(application, "127.0.0.1", 0, 8).start()
    try:
        yield running.url
    finally:
        page.goto("about:blank")  # its live view would reconnect to a stopped server
        running.stop()


def screenshot(page, name):
    """Writes doc/source/dashboard-<name>.png (Must show 3)."""
    # A moved drawing is drawn sharp again once still (layout.js, _transform).
    page.wait_for_timeout(400)
    page.screenshot(path=str(DOCS / f"dashboard-{name}.png"))


def counts_on_page(page):
    return {name: int(page.inner_text(f"#count-{name}"))
            for name in ("done", "progress", "failed", "waiting")}


def counts_in_database(resources):
    counts = {"done": 0, "progress": 0, "failed": 0, "waiting": 0}
    for r in resources:
        key = ("waiting" if r.action == "INIT" else
               {"COMPLETE": "done", "IN_PROGRESS": "progress", "FAILED": "failed"}[r.status])
        counts[key] += 1
    return counts


# -- 1: a stack created through conductors, watched live ------------------------------------

INNER = {"heat_template_version": "2016-10-14",
         "resources": {f"n{i}": {"type": "OS::Heat::TestResource",
                                 "properties": {"wait_secs": 0.05}} for i in range(10)}}


def two_hundred(failing):
    resources = {
        # Everything waits for the gate: the page is open before the rest starts.
        "gate": {"type": "OS::Heat::TestResource", "properties": {"wait_secs": 4}},
        "inner": {"type": "OS::Heat::Stack", "depends_on": "gate",
                  "properties": {"template": INNER}},
    }
    for i in range(188):
        resources[f"r{i:03d}"] = {
            "type": "OS::Heat::TestResource",
            "depends_on": "gate" if i < 8 else f"r{i - 8:03d}",
            "properties": {"wait_secs": 0.05}}
    template = {"heat_template_version": "2016-10-14", "resources": resources}
    environment = {"checks": {failing: [{"name": "version answers", "type": "attribute",
                                         "attribute": "output", "equals": "v2"}]}}
    return template, environment


@pytest.fixture
def notifications_topic(tmp_path):
    """Conductors and the dashboard on one notifications topic of the broker."""
    topic = f"nftest-dashboard-{uuid.uuid4().hex[:10]}"
    transport.register_opts(CONF)
    CONF.set_override("driver", ["messagingv2"], group="oslo_messaging_notifications")
    CONF.set_override("topics", [topic], group="oslo_messaging_notifications")
    conf_file = tmp_path / "notify.conf"
    conf_file.write_text(f"[oslo_messaging_notifications]\ndriver = messagingv2\n"
                         f"topics = {topic}\n")
    yield conf_file
    CONF.clear_override("driver", group="oslo_messaging_notifications")
    CONF.clear_override("topics", group="oslo_messaging_notifications")


@pytest.fixture
def cluster_db_url(pg_url):
    """PostgreSQL only: what the page shows does not depend on the database."""
    return pg_url


def test_live_graph_of_a_stack_created_by_conductors(cluster, notifications_topic, page,
                                                     stack_name):
    cluster.start_many(["cond-a", "cond-b"], extra=("--config-file", str(notifications_topic)))
    engine = cluster.engine()
    template, environment = two_hundred(failing="r130")
    with served(page, db_url=cluster.db_url, transport_url=TRANSPORT_URL) as url:
        stack = engine.create_stack(stack_name, template, environment=environment,
                                    disable_rollback=True)
        page.goto(f"{url}stacks/{stack.id}")
        page.wait_for_selector('#live.on')
        page.wait_for_selector('[data-k$="/r000"]')
        # Set once: a reload would lose it.
        page.evaluate("window.nfOpenedOnce = true")
        seen, done_counts = {}, set()

        def watch():
            states = page.evaluate("""() => Object.fromEntries(
                [...document.querySelectorAll('#viewport [data-k]')].map(
                    el => [el.dataset.k.split('/').pop(), el.dataset.state]))""")
            for name in ("gate", "r000", "r120", "n0"):
                if name in states:
                    seen.setdefault(name, [])
                    if not seen[name] or seen[name][-1] != states[name]:
                        seen[name].append(states[name])
            done_counts.add(counts_on_page(page)["done"])
            # The root's state shows as soon as it is written; a nested stack
            # new to the page is drawn by a reload of its tree 300 ms after
            # the page learns of it: watched until then too.
            return page.inner_text("#stack-state") == "CREATE_FAILED" and "n0" in seen

        wait_for(watch, 240, interval=0.2,
                 what="the page to show CREATE_FAILED and the nested stack's resource")
        assert page.evaluate("window.nfOpenedOnce") is True  # never reloaded
        # States changed under our eyes: waiting, then running, then done.
        assert seen["r000"][0] == "INIT_COMPLETE" and seen["r000"][-1] == "CREATE_COMPLETE"
        assert "CREATE_IN_PROGRESS" in seen["gate"] and seen["gate"][-1] == "CREATE_COMPLETE"
        assert seen["n0"][-1] == "CREATE_COMPLETE"  # the nested stack's, drawn when it came
        assert len(done_counts) >= 5, done_counts

        # The failure and its check's message, without a click.
        failures = page.locator("#failures")
        assert failures.is_visible()
        text = failures.inner_text()
        assert "r130" in text and "post-check 'version answers'" in text
        assert "attribute output is 'test_string', expected 'v2'" in text
        failed_node = page.locator('#viewport [data-k$="/r130"]')
        assert failed_node.get_attribute("data-state") == "CREATE_FAILED"
        assert "CheckFailed" in failed_node.locator("text.why").text_content()
        assert "✗1" in failed_node.locator("text.sub").text_content()

        # Final counts: the database's, once the last notifications arrived.
        in_db = counts_in_database(engine.list_resources(stack.id, nested_depth=5))
        assert sum(in_db.values()) == 200 and in_db["failed"] == 1
        wait_for(lambda: counts_on_page(page) == in_db, 60,
                 what=f"page counts {counts_on_page(page)} to be {in_db}")

        # Which conductor ran each action.
        on_page = page.evaluate("""() => [...document.querySelectorAll('#viewport text.sub')]
                                   .map(t => t.textContent)""")
        ran_by = {c for c in ("cond-a", "cond-b") if any(c in line for line in on_page)}
        assert ran_by, on_page[:5]
        page.click('#viewport [data-k$="/r130"]')
        detail = page.inner_text("#detail")
        assert "version answers" in detail and "FAIL" in detail
        assert any(c in detail for c in ("cond-a", "cond-b"))
        # The nested stack is a group that folds into its owner resource.
        assert page.locator('#viewport g.group[data-k$="/inner"]').count() == 1
        page.click("#collapse-all")
        assert page.locator('#viewport [data-k$="/n0"]').count() == 0
        assert page.locator('#viewport g.node[data-k$="/inner"] [data-toggle]').count() == 1
        page.click("#expand-all")
        assert page.locator('#viewport [data-k$="/n0"]').count() == 1

        page.click('#failure-list li[data-k$="/r130"]')  # zooms to it, labels drawn
        screenshot(page, "stack")

        page.click('.tabs button[data-tab="events"]')
        page.fill('#event-filters input[name="status"]', "FAILED")
        page.wait_for_function("""() => document.querySelectorAll('#events tbody tr').length > 0
            && [...document.querySelectorAll('#events tbody tr')].every(
                tr => tr.children[4].textContent === 'FAILED')""")
        assert "r130" in page.inner_text("#events")
        screenshot(page, "events")

        page.goto(url + "?status=FAILED")
        page.wait_for_selector(f'tr[data-id="{stack.id}"]')
        assert "CREATE_FAILED" in page.inner_text(f'tr[data-id="{stack.id}"]')
        screenshot(page, "stacks")


# -- 2: a 2,000-resource stack's page ------------------------------------------------------------


def two_thousand():
    resources = {}
    for i in range(2000):
        requires = [f"r{i - 40:04d}"] if i >= 40 else []
        if i >= 200 and i % 7 == 0:
            requires.append(f"r{i - 163:04d}")
        resources[f"r{i:04d}"] = {"type": "OS::Heat::None", "depends_on": requires}
    return {"heat_template_version": "2016-10-14", "resources": resources}


@pytest.fixture
def large_stacks_allowed():
    CONF.set_override("max_resources_per_stack", 2000, group="engine")
    yield
    CONF.clear_override("max_resources_per_stack", group="engine")


def test_two_thousand_resource_graph_renders_and_stays_responsive(
        make_engine, sqlite_url, page, stack_name, large_stacks_allowed):
    engine = make_engine(sqlite_url)
    stack = engine.create_stack(stack_name, two_thousand())
    assert engine.wait(stack.id, timeout=300).stack_status == "CREATE_COMPLETE"
    with served(page, engine=engine) as url:
        cdp = page.context.new_cdp_session(page)
        cdp.send("Performance.enable")
        page.goto(f"{url}stacks/{stack.id}")
        page.wait_for_function(
            "() => performance.getEntriesByName('nf-graph-rendered').length > 0", timeout=60000)
        rendered_ms = page.evaluate(
            "performance.getEntriesByName('nf-graph-rendered')[0].startTime")
        stats = page.evaluate("window.nfDashboard.stats")
        assert page.locator("#viewport g.node").count() == 2000
        assert counts_on_page(page) == {"done": 2000, "progress": 0, "failed": 0, "waiting": 0}
        metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}

        # Responsiveness: a zoom, a pan and a full re-layout, timed in the page.
        interaction = page.evaluate("""async () => {
            const svg = document.getElementById('graph');
            const frame = () => new Promise(r => requestAnimationFrame(() => r()));
            let t = performance.now();
            for (let i = 0; i < 10; i++) {
                svg.dispatchEvent(new WheelEvent('wheel', {deltaY: -60, clientX: 400,
                                                           clientY: 300, bubbles: true}));
                await frame();
            }
            const zoom = (performance.now() - t) / 10;
            // Panning at full size, labels drawn.
            const graph = window.nfDashboard.graph;
            graph.view = {x: 0, y: 0, k: 1};
            graph._transform();
            await frame();
            t = performance.now();
            for (let i = 0; i < 10; i++) {
                graph.view.x -= 40;
                graph._transform();
                await frame();
            }
            const pan = (performance.now() - t) / 10;
            t = performance.now();
            window.nfDashboard.graph.render();
            await frame();
            const relayout = performance.now() - t;
            return {zoomFrameMs: zoom, panFrameMs: pan, relayoutMs: relayout};
        }""")
        print(f"\n2,000-resource graph: first render {rendered_ms:.0f} ms after navigation "
              f"(snapshot fetch {stats['fetchMs']:.0f} ms, layout {stats['layoutMs']:.0f} ms, "
              f"draw {stats['drawMs']:.0f} ms); JS heap used "
              f"{metrics['JSHeapUsedSize'] / 2**20:.1f} MiB of "
              f"{metrics['JSHeapTotalSize'] / 2**20:.1f} MiB; DOM nodes {metrics['Nodes']:.0f}; "
              f"zoom {interaction['zoomFrameMs']:.0f} ms/frame (whole graph), pan "
              f"{interaction['panFrameMs']:.0f} ms/frame (full size), full re-layout "
              f"{interaction['relayoutMs']:.0f} ms")
        page.click("#fit")
        screenshot(page, "large")
