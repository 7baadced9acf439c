package io.strata.server.ufs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.exception.UnavailableException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The client cache of {@link UfsManager} is bounded (issue 9, point 6), over real local file systems. */
class UfsManagerBoundsTest {
  @TempDir
  Path dir;

  @Test
  void full_closesTheLeastRecentlyUsedIdleClient() throws Exception {
    String uri = "file:" + dir;
    try (UfsManager m = new UfsManager(2, Duration.ZERO)) {
      UnderFileSystem a = m.get(uri, Map.of("o", "a"));
      m.get(uri, Map.of("o", "b"));
      m.get(uri, Map.of("o", "a")); // a is now the most recently used
      m.get(uri, Map.of("o", "c"));
      assertThat(m.openClients()).isEqualTo(2);
      assertThat(m.isOpen(uri, Map.of("o", "b"))).as("least recently used: closed").isFalse();
      assertThat(m.isOpen(uri, Map.of("o", "a"))).isTrue();
      assertThat(m.get(uri, Map.of("o", "a"))).isSameAs(a);
      Files.writeString(dir.resolve("f"), "x");
      assertThat(m.get(uri, Map.of("o", "c")).getStatus(uri + "/f").length()).isEqualTo(1);
    }
  }

  @Test
  void full_neverClosesALeasedClient_andItsLastLeaseClosedMakesItClosable() throws Exception {
    String uri = "file:" + dir;
    Map<String, String> a = Map.of("o", "a");
    try (UfsManager m = new UfsManager(2, Duration.ZERO)) {
      UfsManager.Lease first = m.acquire(uri, a);
      UfsManager.Lease second = m.acquire(uri, a);
      assertThat(second.ufs()).isSameAs(first.ufs()).isSameAs(m.get(uri, a));
      m.get(uri, Map.of("o", "b")); // a is now the least recently used, but leased
      m.get(uri, Map.of("o", "c"));
      assertThat(m.isOpen(uri, a)).as("leased: kept though least recently used").isTrue();
      assertThat(m.isOpen(uri, Map.of("o", "b"))).as("idle and unleased: closed").isFalse();

      UfsManager.Lease c = m.acquire(uri, Map.of("o", "c"));
      first.close();
      first.close(); // a second close releases nothing more: a is still leased by the second lease
      assertThatThrownBy(() -> m.get(uri, Map.of("o", "d"))).isInstanceOf(UnavailableException.class)
          .hasMessageContaining("strata.ufs.clients.max");
      assertThat(m.isOpen(uri, a)).isTrue();

      second.close(); // a's last lease: a may go now, c (leased) may not
      m.get(uri, Map.of("o", "d"));
      assertThat(m.isOpen(uri, a)).isFalse();
      assertThat(m.isOpen(uri, Map.of("o", "c"))).isTrue();
      Files.writeString(dir.resolve("g"), "xy");
      assertThat(c.ufs().getStatus(uri + "/g").length()).isEqualTo(2);
      c.close();
    }
  }

  @Test
  void full_withEveryClientInUse_refusesANewOneNamingTheKey() throws Exception {
    String uri = "file:" + dir;
    try (UfsManager m = new UfsManager(2, Duration.ofHours(1))) {
      m.get(uri, Map.of("o", "a"));
      m.get(uri, Map.of("o", "b"));
      assertThatThrownBy(() -> m.get(uri, Map.of("o", "c"))).isInstanceOf(UnavailableException.class)
          .hasMessageContaining("strata.ufs.clients.max");
      m.discard(uri, Map.of("o", "a"));
      m.get(uri, Map.of("o", "c"));
      assertThat(m.openClients()).isEqualTo(2);
    }
  }
}
