"""Checks on the demo social app's database, read whole as the admin (a parsed JSON tree), for
the suites that drive the app against a real server (Tests/Browser, Tests/Operations)."""

from __future__ import annotations


def places_of(value, text: str, path: str = "") -> list[tuple[str, object]]:
    """Every place in `value` holding `text` (a uid, a post's ID): a key containing it (with
    what is under it), or a string containing it."""
    found = []
    if isinstance(value, dict):
        for key, child in value.items():
            here = f"{path}/{key}"
            if text in key:
                found.append((here, child))
            found += places_of(child, text, here)
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += places_of(child, text, f"{path}/{index}")
    elif isinstance(value, str) and text in value:
        found.append((path, value))
    return found


def like_disagreements(tree: dict) -> list[str]:
    """Posts whose likes disagree between `posts/<id>/stars`, `starCount`, the author's copy in
    `user-posts/` and `likes/<id>`."""
    problems = []
    likes, copies = tree.get("likes") or {}, tree.get("user-posts") or {}
    for post_id, post in (tree.get("posts") or {}).items():
        stars = set(post.get("stars") or {})
        copy = (copies.get(post.get("author", {}).get("uid")) or {}).get(post_id) or {}
        shapes = {"stars": stars, "starCount": post.get("starCount", 0), "likes": set(likes.get(post_id) or {}),
                  "copy stars": set(copy.get("stars") or {}), "copy starCount": copy.get("starCount", 0)}
        if not (shapes["likes"] == shapes["copy stars"] == stars and shapes["starCount"] == shapes["copy starCount"] == len(stars)):
            problems.append(f"{post_id}: {shapes}")
    return problems
