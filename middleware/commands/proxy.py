"""`plainsight proxy --upstream URL`: the OpenAI-compatible de-identifying proxy (proxy/, docs/proxy.md).

    plainsight proxy --upstream https://api.openai.com/v1 [--config F] [--port 8080]
    plainsight proxy clients add NAME --clients-file F     # prints the new key once
    plainsight proxy clients revoke NAME --clients-file F
    plainsight proxy clients list --clients-file F
"""

from __future__ import annotations

import argparse
import ipaddress
import sys

from ._common import add_config_arguments, add_secret_arguments


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("words", nargs="*", metavar="clients {add,revoke,list} NAME",
                   help="manage the clients file instead of serving")
    p.add_argument("--upstream", metavar="URL", help="the real OpenAI-compatible API (e.g. https://api.openai.com/v1)")
    p.add_argument("--host", help="address to listen on (default 127.0.0.1; others need a clients file)")
    p.add_argument("--port", type=int, help="port (default 8080)")
    p.add_argument("--clients-file", metavar="FILE", help="who may call the proxy (plainsight proxy clients add)")
    p.add_argument("--store", choices=["sqlite", "redis", "memory"], help="where sealed sessions live")
    p.add_argument("--sqlite-path", metavar="FILE")
    p.add_argument("--redis-url", metavar="URL", help="redis:// or rediss:// (TLS); password from "
                                                      "PLAINSIGHT_PROXY__REDIS_PASSWORD")
    p.add_argument("--ssl-certfile", metavar="FILE", help="serve HTTPS with this certificate")
    p.add_argument("--ssl-keyfile", metavar="FILE")
    p.add_argument("--upstream-key-env", metavar="VAR", help="(clients add) the environment variable holding "
                                                             "this client's upstream API key")
    p.add_argument("--fingerprint-fallback", action="store_true", default=None,
                   help="(clients add) allow the first-message fingerprint session fallback for this client")
    add_config_arguments(p, kafka=False, llm=False)
    add_secret_arguments(p, insecure=False)


def _clients(args: argparse.Namespace) -> int:
    from plainsight.proxy.clients import add_client, read_file, revoke_client

    words = args.words
    if len(words) < 2 or words[1] not in ("add", "revoke", "list"):
        print("usage: plainsight proxy clients {add,revoke,list} [NAME] --clients-file FILE", file=sys.stderr)
        return 2
    if not args.clients_file:
        print("plainsight proxy clients: --clients-file FILE is required", file=sys.stderr)
        return 2
    if words[1] == "list":
        for c in read_file(args.clients_file).values():
            print(f"{c.name}\t{'revoked' if c.revoked else 'active'}")
        return 0
    if len(words) != 3:
        print(f"usage: plainsight proxy clients {words[1]} NAME --clients-file FILE", file=sys.stderr)
        return 2
    name = words[2]
    if words[1] == "add":
        key = add_client(args.clients_file, name, upstream_api_key_env=args.upstream_key_env,
                         fingerprint_fallback=args.fingerprint_fallback)
        print(key)
        print(f"client {name!r} added to {args.clients_file} (only a digest is stored: this key is shown once)",
              file=sys.stderr)
        return 0
    if not revoke_client(args.clients_file, name):
        print(f"no client {name!r} in {args.clients_file}", file=sys.stderr)
        return 1
    print(f"client {name!r} revoked (a running proxy refuses its key within a second)", file=sys.stderr)
    return 0


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def run(args: argparse.Namespace) -> int:
    if args.words:
        if args.words[0] != "clients":
            print("plainsight proxy: unknown words; did you mean 'plainsight proxy clients ...'?", file=sys.stderr)
            return 2
        return _clients(args)
    if getattr(args, "mode", None) not in (None, "surrogate"):
        print("plainsight proxy: the proxy always writes surrogates (re-identification needs them); drop --mode",
              file=sys.stderr)
        return 2
    import uvicorn

    from plainsight.proxy.server import ProxyServer

    from ._common import settings_from_args

    ov = {k: v for k, v in {"upstream": args.upstream, "host": args.host, "port": args.port,
                             "clients_file": args.clients_file, "store": args.store,
                             "sqlite_path": args.sqlite_path, "redis_url": args.redis_url}.items() if v is not None}
    settings = settings_from_args(args, proxy=ov)
    ps = settings.proxy
    if not ps.upstream:
        print("plainsight proxy: --upstream URL (or proxy.upstream) is required", file=sys.stderr)
        return 2
    if not ps.clients_file and not _loopback(ps.host):
        print(f"plainsight proxy: refusing to listen on {ps.host} without a clients file: anyone who can reach it "
              "could read re-identified replies. Add clients (plainsight proxy clients add NAME --clients-file F) "
              "and pass --clients-file, or listen on 127.0.0.1", file=sys.stderr)
        return 2
    if ps.store != "memory":
        from plainsight.middleware.keys import require_worker_secrets

        require_worker_secrets(settings)
    server = ProxyServer(settings)
    server.pipeline.warm_up()
    scheme = "https" if args.ssl_certfile else "http"
    if ps.clients_file:
        who = f"clients from {ps.clients_file}"
    else:
        who = "no clients file: loopback only, one local app, its upstream key passed through"
    print(f"plainsight proxy on {scheme}://{ps.host}:{ps.port}/v1 → {ps.upstream} ({who}; sessions in {ps.store})",
          file=sys.stderr)
    uvicorn.run(server.app, host=ps.host, port=ps.port, log_level="warning", access_log=False,
                ssl_certfile=args.ssl_certfile, ssl_keyfile=args.ssl_keyfile)
    return 0
