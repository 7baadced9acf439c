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
