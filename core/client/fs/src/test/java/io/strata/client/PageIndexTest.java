package io.strata.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import io.strata.common.conf.StrataConf;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The page cache's index keeps its bytes within the quota and evicts by its policy (LRU: least recently
 * read first; LFU: a page read often outlives a scan), calling back for evicted pages only; the cache
 * rebuilds its index from the page files on disk, dropping partial ones, and drops a page whose bytes fail
 * their checksum.
 */
class PageIndexTest {
  private static final long PAGE = 100;

  private static PageKey page(long i) {
    return new PageKey(7, 1_000_000L + 7, 10_000, 123, i);
  }

  private static List<Long> evictionsOf(BiFunction<Long, Consumer<PageKey>, PageIndex> make,
      java.util.function.Consumer<PageIndex> accesses) {
    List<Long> evicted = new ArrayList<>();
    PageIndex index = make.apply(4 * PAGE, k -> evicted.add(k.index()));
    accesses.accept(index);
    assertThat(index.bytes()).isLessThanOrEqualTo(4 * PAGE);
    assertThat(index.pages()).isLessThanOrEqualTo(4);
    return evicted;
  }

  /** Fills the index with pages 0..3, reads page 0 ten times, then scans pages 4..9 once each. */
  private static void hotPageThenScan(PageIndex index) {
    for (long i = 0; i < 4; i++) {
      index.add(page(i), PAGE);
    }
    for (int n = 0; n < 10; n++) {
      assertThat(index.touch(page(0))).isTrue();
    }
    for (long i = 4; i < 10; i++) {
      index.add(page(i), PAGE);
      index.touch(page(i));
    }
  }

  @Test
  void lru_evictsTheLeastRecentlyReadPage() {
    List<Long> evicted = evictionsOf(PageIndex::lru, index -> {
      for (long i = 0; i < 4; i++) {
        index.add(page(i), PAGE);
      }
      assertThat(index.touch(page(0))).isTrue();
      index.add(page(4), PAGE);
      assertThat(index.touch(page(1))).isFalse();
      assertThat(index.touch(page(0))).isTrue();
    });
    assertThat(evicted).containsExactly(1L);
  }

  @Test
  void lru_letsAScanEvictAHotPage_lfuKeepsIt() {
    assertThat(evictionsOf(PageIndex::lru, PageIndexTest::hotPageThenScan)).contains(0L).hasSize(6);
    List<Long> lfu = evictionsOf(PageIndex::lfu, PageIndexTest::hotPageThenScan);
    assertThat(lfu).doesNotContain(0L).hasSize(6);
  }

  @Test
  void removeAndReplace_doNotCallBack() {
    for (BiFunction<Long, Consumer<PageKey>, PageIndex> make : List.<BiFunction<Long, Consumer<PageKey>,
        PageIndex>>of(PageIndex::lru, PageIndex::lfu)) {
      List<Long> evicted = evictionsOf(make, index -> {
        index.add(page(0), PAGE);
        index.add(page(0), PAGE);
        index.add(page(1), PAGE);
        index.remove(page(1));
        assertThat(index.bytes()).isEqualTo(PAGE);
        assertThat(index.touch(page(1))).isFalse();
      });
      assertThat(evicted).isEmpty();
    }
  }

  @Test
  void pageKey_nameRoundTrips_andForeignNamesAreNotPages() {
    PageKey k = new PageKey(12, 1_000_000L + 12, 345, 6789, 3);
    assertThat(PageKey.parse(k.fileName())).isEqualTo(k);
    assertThat(PageKey.parse(".lock")).isNull();
    assertThat(PageKey.parse("1_2_3_4.page")).isNull();
    assertThat(PageKey.isOldLayout("1_2_3_4.page")).isTrue();
    assertThat(PageKey.isOldLayout(k.fileName())).isFalse();
    assertThat(PageKey.parse("1_2_x_4_5.page")).isNull();
    assertThat(PageKey.parse("01_2_3_4_5.page")).isNull();
    // The same file id, length and times but another creation time (another cluster's file 12): another page.
    assertThat(new PageKey(12, 999, 345, 6789, 3).fileName()).isNotEqualTo(k.fileName());
  }

  private static StrataConf conf(Path dir, String quota) {
    return StrataConf.of(Map.of(ClientKeys.PAGE_CACHE_ENABLED.name(), "true",
        ClientKeys.PAGE_CACHE_DIR.name(), dir.toString(), ClientKeys.PAGE_CACHE_PAGE_SIZE.name(), "4KB",
        ClientKeys.PAGE_CACHE_SIZE.name(), quota));
  }

  private static byte[] bytes(int n, int seed) {
    byte[] b = new byte[n];
    new java.util.Random(seed).nextBytes(b);
    return b;
  }

  @Test
  void cache_rebuildsFromDisk_dropsPartialAndTempFiles_andHoldsTheQuota(@TempDir Path dir) throws Exception {
    long fileLength = 5 * 4096 + 10;
    List<PageKey> keys = new ArrayList<>();
    try (LocalPageCache cache = LocalPageCache.open(conf(dir, "1MB"))) {
      for (int i = 0; i < 6; i++) {
        PageKey k = new PageKey(9, 1_000_000L + 9, fileLength, 55, i);
        int len = i < 5 ? 4096 : 10;
        cache.store(k, bytes(len, i), len);
        keys.add(k);
      }
      assertThat(cache.pages()).isEqualTo(6);
    }
    // A crash mid-write: a leftover temp file, and (as if written without the rename) a short page file.
    Files.write(dir.resolve(".9_" + fileLength + "_55_0.page.1.tmp"), new byte[100]);
    Path partial = dir.resolve(keys.get(2).fileName());
    Files.write(partial, java.util.Arrays.copyOf(Files.readAllBytes(partial), 1000));

    try (LocalPageCache cache = LocalPageCache.open(conf(dir, "1MB"))) {
      assertThat(cache.pages()).isEqualTo(5);
      assertThat(Files.exists(partial)).isFalse();
      byte[] got = new byte[4096];
      assertThat(cache.read(keys.get(1), got, 4096)).isTrue();
      assertThat(got).isEqualTo(bytes(4096, 1));
      assertThat(cache.read(keys.get(2), got, 4096)).isFalse();
      byte[] last = new byte[4096];
      assertThat(cache.read(keys.get(5), last, 10)).isTrue();
      assertThat(java.util.Arrays.copyOf(last, 10)).isEqualTo(bytes(10, 5));
    }
    try (var files = Files.list(dir)) {
      assertThat(files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".tmp"))).isEmpty();
    }

    long twoPages = 2 * (4096 + LocalPageCache.HEADER_BYTES);
    try (LocalPageCache cache = LocalPageCache.open(conf(dir, Long.toString(twoPages)))) {
      assertThat(cache.bytes()).isLessThanOrEqualTo(twoPages);
      assertThat(diskBytes(dir)).isLessThanOrEqualTo(twoPages);
    }
  }

  @Test
  void cache_dropsAPageThatFailsItsChecksum(@TempDir Path dir) throws Exception {
    try (LocalPageCache cache = LocalPageCache.open(conf(dir, "1MB"))) {
      PageKey k = new PageKey(3, 1_000_000L + 3, 4096, 1, 0);
      cache.store(k, bytes(4096, 3), 4096);
      Path file = dir.resolve(k.fileName());
      byte[] raw = Files.readAllBytes(file);
      raw[LocalPageCache.HEADER_BYTES + 77] ^= 1;
      Files.write(file, raw);
      assertThat(cache.read(k, new byte[4096], 4096)).isFalse();
      assertThat(cache.corruptPages()).isEqualTo(1);
      assertThat(Files.exists(file)).isFalse();
      assertThat(cache.pages()).isZero();
    }
  }

  @Test
  void aSecondClientOnTheSameDir_runsWithoutTheCache_andAClosedCacheNeitherServesNorStores(@TempDir Path dir) {
    try (LocalPageCache first = LocalPageCache.open(conf(dir, "1MB"))) {
      assertThat(first).isNotNull();
      assertThat(LocalPageCache.open(conf(dir, "1MB"))).isNull();
    }
    LocalPageCache again = LocalPageCache.open(conf(dir, "1MB"));
    assertThat(again).as("free again once the first closed").isNotNull();
    PageKey k = new PageKey(1, 1_000_000L + 1, 4096, 1, 0);
    again.store(k, bytes(4096, 1), 4096);
    again.close();
    again.close(); // a second close is a no-op
    assertThat(again.read(k, new byte[4096], 4096)).as("a closed cache serves nothing").isFalse();
    again.store(new PageKey(1, 1_000_000L + 1, 4096, 1, 1), bytes(4096, 2), 4096);
    assertThat(Files.exists(dir.resolve(new PageKey(1, 1_000_000L + 1, 4096, 1, 1).fileName()))).isFalse();
  }

  @Test
  void aQuotaSmallerThanOnePage_isRefusedNamingBothKeys(@TempDir Path dir) {
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> LocalPageCache.open(conf(dir, "4KB")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("strata.user.client.cache.size=4096")
        .hasMessageContaining("strata.user.client.cache.page.size=4096");
  }

  private static long diskBytes(Path dir) throws java.io.IOException {
    try (var files = Files.list(dir)) {
      return files.filter(p -> p.getFileName().toString().endsWith(PageKey.SUFFIX)).mapToLong(p -> p.toFile().length())
          .sum();
    }
  }
}
