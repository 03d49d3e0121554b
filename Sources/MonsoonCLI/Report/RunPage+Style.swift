/// The page's inline style and its one script.
extension RunPage {
    static let css = """
    body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;background:#fff}
    h1{font-size:1.4em;margin:0 0 .3em}h2{font-size:1.1em;margin:1.4em 0 .4em}
    .note{color:#666}.legend{margin:.3em 0;color:#444}.legend .item{margin-right:1em;white-space:nowrap}
    svg text{font:11px system-ui,sans-serif;fill:#444}.axis line,.axis path{stroke:#999}.grid line{stroke:#eee}
    .completed{--c:#2a9d5c}.failed{--c:#d1495b}.interrupted{--c:#e76f51}.paused{--c:#5c7aa8}.removed{--c:#6c757d}
    .queued,.notStarted{--c:#9aa5b1}
    .swatch{fill:var(--c)}.download rect{fill:var(--c)}
    .download rect.phase-queued,.swatch.phase-queued{fill:#ced4da}
    .download rect.phase-retrying,.swatch.phase-retrying{fill:#f6bd60}
    .download rect.phase-paused,.swatch.phase-paused{fill:#8d99ae}
    .download rect.phase-waiting{fill-opacity:.35}.swatch.phase-waiting{fill:#2a9d5c;fill-opacity:.35}
    .swatch.phase-transferring{fill:#2a9d5c}
    .download rect.failed-attempt{stroke:#d1495b;stroke-width:1.5}.swatch.failed-attempt{stroke:#d1495b;stroke-width:3}.download:hover rect{stroke:#222;stroke-width:.5}
    .throughput polyline{fill:none;stroke-width:1.5}.throughput polyline.overall{stroke:#222;stroke-width:2;stroke-dasharray:5 3}
    .ttfb rect.p90{fill:#a8c5e6}.ttfb rect.p50{fill:#2f6fb3}
    svg text.heading{font-size:12px;font-weight:600;fill:#222}
    table{border-collapse:collapse;font-size:13px}td,th{border-bottom:1px solid #ddd;padding:.25em .6em;text-align:left;vertical-align:top}thead th{background:#f3f3f3}
    table.hosts td,table.hosts th{text-align:right}table.hosts td{white-space:nowrap}table.hosts td:nth-child(6){white-space:normal;text-align:left;min-width:11em}table.hosts td:first-child,table.hosts th:first-child{text-align:left}
    """

    /// Counts what the browser really drew (a bar or a line with a width, a label with text wholly
    /// inside the page), so a test reading the DOM knows the SVG rendered, not only that it was written.
    static let script = """
    (function(){function drawn(s){var n=0;document.querySelectorAll(s).forEach(function(e){var b=e.getBBox();if(b.width>0&&b.height>=0)n++;});return n;}
    document.body.setAttribute('data-rendered-bars',drawn('g.timeline g.download'));
    document.body.setAttribute('data-rendered-series',drawn('g.throughput polyline.series'));
    document.body.setAttribute('data-rendered-ttfb',drawn('g.ttfb g.host'));
    var shown=0;document.querySelectorAll('g.timeline text.label').forEach(function(e){var b=e.getBBox();if(b.x>=0&&b.width>0&&e.firstChild.nodeValue.trim())shown++;});
    document.body.setAttribute('data-rendered-labels',shown);})();
    """
}
