package io.strata.common.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.exception.InvalidArgumentException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Identities from keys and from a locality script; distances between them. */
class TieredIdentityTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  @Test
  void distance_isNodeThenRack_andUnknownMatchesNothing() {
    TieredIdentity me = new TieredIdentity("n1", "r1");
    assertThat(me.distanceTo(new TieredIdentity("n1", "r9"))).isZero();
    assertThat(me.distanceTo(new TieredIdentity("n2", "r1"))).isEqualTo(1);
    assertThat(me.distanceTo(new TieredIdentity("n2", "r2"))).isEqualTo(2);
    assertThat(TieredIdentity.UNKNOWN.distanceTo(TieredIdentity.UNKNOWN)).isEqualTo(2);
  }

  @Test
  void resolve_usesKeys_andTheHostWhenNoNodeIsSet() throws Exception {
    assertThat(TieredIdentity.resolve("", "r1", "", TIMEOUT, "k", "host-a"))
        .isEqualTo(new TieredIdentity("host-a", "r1"));
    assertThat(TieredIdentity.resolve("n7", "", "", TIMEOUT, "k", "host-a"))
        .isEqualTo(new TieredIdentity("n7", ""));
  }

  @Test
  void resolve_takesWhatTheScriptPrints_overTheKeys() throws Exception {
    assertThat(TieredIdentity.resolve("n-key", "r-key", "echo node=n-script; echo rack=r-script", TIMEOUT, "k", "h"))
        .isEqualTo(new TieredIdentity("n-script", "r-script"));
    // A script that prints only the rack leaves the node to the key.
    assertThat(TieredIdentity.resolve("n-key", "", "printf 'rack=r5'", TIMEOUT, "k", "h"))
        .isEqualTo(new TieredIdentity("n-key", "r5"));
  }

  @Test
  void resolve_failsNamingTheScript_whenItPrintsSomethingElse_exitsNonZero_orHangs() {
    assertThatThrownBy(() -> TieredIdentity.resolve("", "", "echo zone=z1", TIMEOUT, "strata.x.script", "h"))
        .isInstanceOf(InvalidArgumentException.class).hasMessageContaining("strata.x.script")
        .hasMessageContaining("zone=z1");
    assertThatThrownBy(() -> TieredIdentity.resolve("", "", "echo broken >&2; exit 3", TIMEOUT, "strata.x.script", "h"))
        .isInstanceOf(InvalidArgumentException.class).hasMessageContaining("exited with 3")
        .hasMessageContaining("broken");
    long start = System.nanoTime();
    assertThatThrownBy(() -> TieredIdentity.resolve("", "", "sleep 30", Duration.ofMillis(300), "strata.x.script",
        "h")).isInstanceOf(InvalidArgumentException.class).hasMessageContaining("did not finish within 300 ms");
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
  }

  @Test
  void workerAddress_equalityIgnoresTheIdentity_andTheHostIsTheDefaultNode() {
    WorkerAddress a = new WorkerAddress("h", 1, new TieredIdentity("n", "r"));
    assertThat(a).isEqualTo(new WorkerAddress("h", 1)).hasSameHashCodeAs(new WorkerAddress("h", 1));
    assertThat(new WorkerAddress("h", 1).identity()).isEqualTo(new TieredIdentity("h", ""));
    assertThat(new WorkerAddress("h", 1, new TieredIdentity("", "r")).identity())
        .isEqualTo(new TieredIdentity("h", "r"));
  }
}
