package io.strata.worker.store;

import static io.strata.worker.store.FakeDir.free;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What every {@link Allocator} must do; run once per implementation by its subclasses. */
abstract class AllocatorContractTest {
  abstract Allocator newAllocator();

  @Test
  void allocate_returnsNull_forNoDirs() {
    assertThat(newAllocator().allocate(List.of(), 1)).isNull();
  }

  @Test
  void allocate_returnsNull_whenNoDirHasRoom() {
    List<FakeDir> dirs = List.of(free(0, 99), free(1, 50), free(2, 0));
    assertThat(newAllocator().allocate(dirs, 100)).isNull();
  }

  @Test
  void allocate_returnsTheOnlyDirWithRoom_asTheSameObject_onEveryCall() {
    Allocator allocator = newAllocator();
    FakeDir roomy = free(1, 500);
    List<FakeDir> dirs = List.of(free(0, 10), roomy, free(2, 20));
    for (int i = 0; i < 3; i++) { // round robin must come back to it on every turn
      assertThat(allocator.allocate(dirs, 100)).isSameAs(roomy);
    }
  }

  @Test
  void allocate_acceptsADir_whoseAvailableBytesEqualTheRequest() {
    FakeDir exact = free(0, 100);
    assertThat(newAllocator().allocate(List.of(exact), 100)).isSameAs(exact);
  }

  @Test
  void allocate_neverReturnsABadDir_evenWhenItHasTheMostRoom() {
    Allocator allocator = newAllocator();
    FakeDir good = free(1, 200);
    List<FakeDir> dirs = List.of(free(0, 900).bad(), good, free(2, 800).bad());
    for (int i = 0; i < 4; i++) {
      assertThat(allocator.allocate(dirs, 100)).isSameAs(good);
    }
  }

  @Test
  void allocate_returnsNull_whenEveryDirWithRoomIsBad() {
    List<FakeDir> dirs = List.of(free(0, 900).bad(), free(1, 900).bad());
    assertThat(newAllocator().allocate(dirs, 1)).isNull();
  }

  @Test
  void allocate_ofZeroBytes_returnsAGoodDir_evenAFullOne() {
    FakeDir full = free(0, 0);
    assertThat(newAllocator().allocate(List.of(full), 0)).isSameAs(full);
  }

  @Test
  void allocate_refusesANegativeSize_namingIt() {
    assertThatThrownBy(() -> newAllocator().allocate(List.of(free(0, 10)), -5))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("-5");
  }

  @Test
  void allocate_doesNotModifyTheList() {
    List<FakeDir> dirs = new ArrayList<>(List.of(free(0, 100), free(1, 300), free(2, 200)));
    List<FakeDir> before = List.copyOf(dirs);
    Allocator allocator = newAllocator();
    for (int i = 0; i < 5; i++) {
      assertThat(allocator.allocate(dirs, 50)).isIn(before);
    }
    assertThat(dirs).containsExactlyElementsOf(before);
  }
}
