package io.strata.client.shortcircuit;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** A long-lived client keeps only its recent fallback reasons: memory does not grow with every fallback. */
class ShortCircuitClientTest {
  @Test
  void fallbackReasons_keepTheLastHundred_oldestFirst() {
    try (ShortCircuitClient c = new ShortCircuitClient(ShortCircuitClient.Mode.FD, "/tmp/none-${port}.sock", 1000)) {
      for (int i = 0; i < 150; i++) {
        c.fallback("kind", "reason " + i);
      }
      List<String> kept = c.fallbackReasons();
      assertThat(kept).hasSize(ShortCircuitClient.FALLBACK_REASONS_KEPT).startsWith("reason 50").endsWith("reason 149");
    }
  }
}
