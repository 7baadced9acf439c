package io.strata.worker.store;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class DirViewTest {
  @Test
  void availableBytes_isCapacityLessUsed() {
    DirView dir = new FakeDir(1, "SSD", 0, "/ssd0", 1000, 300, true);
    assertThat(dir.availableBytes()).isEqualTo(700);
  }

  @Test
  void availableBytes_isZero_notNegative_whenUsedExceedsCapacity() {
    // A quota lowered below what is stored already (or a racing reservation) must not read as negative.
    DirView dir = new FakeDir(1, "SSD", 0, "/ssd0", 1000, 1500, true);
    assertThat(dir.availableBytes()).isZero();
  }

  @Test
  void availableBytes_isAllOfCapacity_whenEmpty() {
    DirView dir = new FakeDir(2, "HDD", 3, "/hdd3", 4096, 0, false);
    assertThat(dir.availableBytes()).isEqualTo(4096);
  }
}
