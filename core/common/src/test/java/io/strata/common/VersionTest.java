package io.strata.common;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class VersionTest {
  @Test
  void isTheBuildsProjectVersion() {
    // The pom's version, as Maven filtered it into the resource (a placeholder or "unknown" would fail).
    assertThat(Version.VERSION).matches("\\d+\\.\\d+\\.\\d+(-SNAPSHOT)?");
  }
}
