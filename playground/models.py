"""The site stores nothing about compiles; only the rate limit keeps counters."""

from django.db import models


class RateCounter(models.Model):
    """One client's request count in one rate-limit window (see ``playground.ratecache``)."""

    cache_key = models.CharField(max_length=255, primary_key=True)
    hits = models.BigIntegerField()
    expires = models.FloatField(db_index=True)  # seconds since the epoch

    class Meta:
        db_table = "playground_rate_counter"

    def __str__(self) -> str:
        return f"{self.cache_key}: {self.hits}"
