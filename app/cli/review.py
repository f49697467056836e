"""ragpulse review: score the audit queue in the terminal, one trace after another.

The reviewer sees the question, the retrieved chunks and the answer, scores groundedness (1-5)
and answer relevancy (1-5) with the number keys, and only then sees what the judge said (so the
judge's verdict cannot anchor the human's). Enter sends the review as a `review` feedback event to
the sidecar, where it meets its judgment (judging/calibration.py); with --offline it is written
to the review queue's store instead (it then counts in `ragpulse calibration`, not in /metrics).
"""

from __future__ import annotations

import argparse
from typing import Any

from ragpulse.app.cli.common import store_flags, store_path


def add_commands(commands: Any) -> None:
    review = commands.add_parser("review", help="score the audit queue in the terminal (human reviews for calibration)")
    store_flags(review)
    review.add_argument("--target", default="http://127.0.0.1:8080",
                        help="the sidecar that receives the reviews (default http://127.0.0.1:8080)")
    review.add_argument("--token", help="bearer token: the sidecar's http.review_token (reviews have a scope of their "
                        "own; needed when it is set, or beyond loopback)")
    review.add_argument("--reviewer", help="your name or id, kept with each review")
    review.add_argument("--offline", action="store_true",
                        help="write reviews to the review queue's store instead of sending them to the sidecar")
    review.set_defaults(handler=_review)


def _review(args: argparse.Namespace) -> int:
    path = store_path(args, "review queue")
    if path is None:
        return 2
    from ragpulse.app.cli.review_app import ReviewApp  # textual: loaded by this command only (not by `ragpulse run`)

    ReviewApp(path, target=args.target, token=args.token, reviewer=args.reviewer, offline=args.offline).run()
    return 0
