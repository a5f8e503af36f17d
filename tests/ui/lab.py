"""What the browser tests share: JavaScript run inside JupyterLab, and "open, Run All, check".

Every snippet finds *its* notebook panel by path (``window.jupyterapp``, exposed by the test
server), so another open tab can never be used by mistake.
"""

from __future__ import annotations

import time

RUN_ALL_TIMEOUT_MS = 240_000

JS_PANEL = """
    const app = window.jupyterapp;
    const panel = app ? Array.from(app.shell.widgets('main')).find(
        (widget) => widget.context && widget.context.path === path) : undefined;
"""

JS_KERNEL_IDLE = (
    "(path) => {"
    + JS_PANEL
    + """
    const kernel = panel && panel.sessionContext && panel.sessionContext.session
        && panel.sessionContext.session.kernel;
    return !!(kernel && kernel.connectionStatus === 'connected' && kernel.status === 'idle'
        && panel.content && panel.content.widgets.length > 0);
}"""
)

JS_RUN_ALL = (
    "async (path) => {"
    + JS_PANEL
    + """
    app.shell.activateById(panel.id);
    await app.commands.execute('notebook:clear-all-cell-outputs');
    app.commands.execute('notebook:run-all-cells');
    return panel.id;
}"""
)

JS_ALL_EXECUTED = (
    "(path) => {"
    + JS_PANEL
    + """
    const kernel = panel.sessionContext.session.kernel;
    const cells = panel.content.widgets.filter((cell) => cell.model.type === 'code');
    const done = cells.every((cell) => cell.model.executionCount !== null
        && !(cell.promptNode && cell.promptNode.textContent.includes('*')));
    return done && kernel.status === 'idle';
}"""
)

JS_CELL_PROBLEMS = (
    "(path) => {"
    + JS_PANEL
    + """
    const problems = [];
    panel.content.widgets.forEach((cell, index) => {
        if (cell.model.type !== 'code') return;
        for (const output of cell.model.outputs.toJSON()) {
            if (output.output_type === 'error') {
                problems.push(`cell ${index}: ${output.ename}: ${output.evalue}`);
            } else if (output.output_type === 'stream' && output.name === 'stderr') {
                const text = Array.isArray(output.text) ? output.text.join('') : output.text;
                // tqdm's progress bars are the one thing the lessons write to stderr on purpose.
                const progress = text.trim() === '' || /[0-9]+%[|]/.test(text);
                if (!progress) problems.push(`cell ${index} stderr: ${text.slice(0, 300)}`);
            }
        }
    });
    return problems;
}"""
)

# Errors shown inside widgets (ipywidgets catches callback exceptions and displays them).
JS_DOM_ERRORS = """(node) => Array.from(node.querySelectorAll(
    '[data-mime-type="application/vnd.jupyter.stderr"]'
)).map((error) => error.textContent.slice(0, 300))"""

JS_IMG_SRC = """(node) => {
    const img = node.querySelector('img');
    return img ? img.getAttribute('src') : null;
}"""

JS_IMG_CHANGED = """([node, before]) => {
    const img = node.querySelector('img');
    const src = img ? img.getAttribute('src') : null;
    return src !== null && src !== before && (!img.complete || img.naturalWidth > 0);
}"""


def open_and_run_all(page, lab_server, notebook: str):
    """Open a copy of ``notebook``, wait for its kernel, clear outputs, Run All, wait for the end.

    Returns the notebook panel's locator; fails if a cell produced an error or wrote to stderr
    (other than a tqdm progress bar).
    """
    page.goto(lab_server.tree_url(notebook))
    page.wait_for_function(JS_KERNEL_IDLE, arg=notebook, timeout=120_000)
    start = time.perf_counter()
    panel = page.locator(f"[id='{page.evaluate(JS_RUN_ALL, notebook)}']")
    page.wait_for_timeout(500)
    page.wait_for_function(JS_ALL_EXECUTED, arg=notebook, timeout=RUN_ALL_TIMEOUT_MS, polling=250)
    print(f"\n{notebook}: Run All took {time.perf_counter() - start:.1f} s in JupyterLab")
    problems = page.evaluate(JS_CELL_PROBLEMS, notebook)
    assert problems == [], "\n".join(problems)
    return panel
