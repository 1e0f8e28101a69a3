"""Stack tags and the list filters on them, as Heat's.

Heat (heat/engine/service.py ``list_stacks``, heat/db/api.py
``_filter_and_page_query``): ``tags`` keeps stacks having every tag given,
``tags_any`` those having at least one, ``not_tags`` those not having all
of them, ``not_tags_any`` those having none. A tag is a string of 1-80
characters without a comma (heatclient passes them comma-separated).
"""

from nestedflow import exceptions

MAX_TAG_LENGTH = 80


def check_tags(tags, path="tags"):
    """The tags as a list, or StackValidationFailed naming the bad one."""
    if tags is None:
        return None
    if isinstance(tags, str):
        tags = [tag.strip() for tag in tags.split(",") if tag.strip()]
    if not isinstance(tags, (list, tuple)):
        raise exceptions.StackValidationFailed("must be a list of strings", path=path)
    for index, tag in enumerate(tags):
        if not isinstance(tag, str) or not tag or len(tag) > MAX_TAG_LENGTH or "," in tag:
            raise exceptions.StackValidationFailed(
                f"a tag is a string of 1-{MAX_TAG_LENGTH} characters without a comma "
                f"(got {tag!r})", path=f"{path}[{index}]")
    return list(dict.fromkeys(tags))


def matches(stack_tags, tags=None, tags_any=None, not_tags=None, not_tags_any=None):
    """Does a stack with ``stack_tags`` pass Heat's four tag filters?"""
    have = set(stack_tags)
    if tags and not set(tags) <= have:
        return False
    if tags_any and not set(tags_any) & have:
        return False
    if not_tags and set(not_tags) <= have:
        return False
    return not (not_tags_any and set(not_tags_any) & have)
