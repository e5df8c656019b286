"""The local web app, ``crowdsafe app`` (docs/app.md): Starlette pages with htmx (vendored, in
``static/``), served by uvicorn on 127.0.0.1, over the library's public functions.

- :mod:`crowdsafe.app.server`: binds, prints the one-time URL, serves, removes the private folder;
- :mod:`crowdsafe.app.security`: the guard (Host, token and cookie, Origin and CSRF, headers);
- :mod:`crowdsafe.app.pages`: the routes, one step a URL; templates in ``templates/``;
- :mod:`crowdsafe.app.workspace`: the session's table, schema and releases, and the library calls;
- :mod:`crowdsafe.app.schema_view`: the schema review (trees, coverage, markers);
- :mod:`crowdsafe.app.upload`: an upload streamed into the private folder.

Imported only by ``crowdsafe app``: the other commands never load it.
"""
