package io.strata.client;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.benmanes.caffeine.cache.Ticker;
import io.strata.common.conf.StrataConf;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The metadata cache's promise to a client's own writes, with the interleaving that broke it: one thread fetches an
 * answer, another thread's write returns and invalidates, and only then does the first thread put its answer. That
 * answer, from before the write, must not be cached (the writer's next read would see it).
 */
class MetadataCacheTest {
  private static MetadataCache enabled() {
    return MetadataCache.from(StrataConf.of(Map.of(ClientKeys.METADATA_CACHE_ENABLED.name(), "true")),
        Ticker.systemTicker());
  }

  @Test
  void anAnswerFetchedBeforeAnInvalidation_isNotPutAfterIt() {
    MetadataCache cache = enabled();
    long fetchedAt = cache.generation(); // a fetch begins: /d/f does not exist yet
    cache.invalidate("/d/f"); // another thread of the client created /d/f; the master answered
    cache.putExists("/d/f", false, fetchedAt);
    cache.putListing("/d", List.of(), fetchedAt);
    assertThat(cache.exists("/d/f")).as("the stale answer").isNull();
    assertThat(cache.listing("/d")).isNull();

    long fresh = cache.generation(); // a fetch begun after the write keeps its answer
    cache.putExists("/d/f", true, fresh);
    assertThat(cache.exists("/d/f")).isTrue();
  }

  @Test
  void invalidatingPathsThatAreNotAbsolute_throwsNothing_andStillForgetsTheAbsoluteOnes() {
    MetadataCache cache = enabled();
    cache.putExists("/d/f", true, cache.generation());
    cache.putListing("/d", List.of(), cache.generation());
    cache.invalidate(java.util.Arrays.asList("x", "", null, "a/b", "/d/f"));
    assertThat(cache.exists("/d/f")).isNull();
    assertThat(cache.listing("/d")).isNull();
  }

  @Test
  void clear_forgetsEverything_andAnAnswerFetchedBefore_isNotPutAfter() {
    MetadataCache cache = enabled();
    cache.putExists("/a", true, cache.generation());
    cache.putListing("/", List.of(), cache.generation());
    long fetchedAt = cache.generation();
    cache.clear();
    cache.putExists("/b", true, fetchedAt);
    assertThat(cache.size()).isZero();
    assertThat(cache.exists("/a")).isNull();
    assertThat(cache.exists("/b")).isNull();
  }

  @Test
  void invalidatingPaths_forgetsEachPath_whatIsUnderIt_andItsAncestors_only() {
    MetadataCache cache = enabled();
    List<String> kept = List.of("/a/bc", "/a/bc/x", "/other", "/other/y", "/a/b2");
    List<String> gone = List.of("/", "/a", "/a/b", "/a/b/c", "/a/b/c/d/e", "/z", "/z/q", "/w/v");
    for (String p : concat(kept, gone)) {
      cache.putExists(p, true, cache.generation());
      cache.putListing(p, List.of(), cache.generation());
    }
    cache.invalidate(List.of("/a/b", "/z", "/w/v"));
    for (String p : gone) {
      assertThat(cache.exists(p)).as(p).isNull();
      assertThat(cache.listing(p)).as(p).isNull();
    }
    for (String p : kept) {
      assertThat(cache.exists(p)).as(p).isTrue();
      assertThat(cache.listing(p)).as(p).isEmpty();
    }
    // "/w" is an ancestor of "/w/v": gone, though never put here; the root too.
    cache.putExists("/w", true, cache.generation());
    cache.invalidate("/w/v/deeper");
    assertThat(cache.exists("/w")).isNull();
  }

  private static List<String> concat(List<String> a, List<String> b) {
    List<String> out = new java.util.ArrayList<>(a);
    out.addAll(b);
    return out;
  }
}
