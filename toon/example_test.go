package toon_test

import (
	"errors"
	"fmt"

	"github.com/ctxfit/ctxfit/toon"
)

func ExampleEncode() {
	data := []byte(`{"bookings":[
		{"id":"BK00001","status":"confirmed","guest":"Ada Lovelace","nights":3,"total":412.50},
		{"id":"BK00002","status":"pending","guest":"Alan Turing","nights":1,"total":99.00}
	],"owner":{"name":"Grace","tags":["admin","ops"]}}`)
	out, err := toon.Encode(nil, data, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(out))
	// Output:
	// bookings[2]{id,status,guest,nights,total}:
	//   BK00001,confirmed,Ada Lovelace,3,412.5
	//   BK00002,pending,Alan Turing,1,99
	// owner:
	//   name: Grace
	//   tags[2]: admin,ops
}

func ExampleEncode_delimiter() {
	out, _ := toon.Encode(nil, []byte(`[{"city":"Paris, France","code":"FR"},{"city":"Rome","code":"IT"}]`),
		&toon.Options{Delimiter: toon.Pipe})
	fmt.Println(string(out))
	// Output:
	// [2|]{city|code}:
	//   Paris, France|FR
	//   Rome|IT
}

// A value TOON cannot carry losslessly is refused: send the JSON instead.
func ExampleEncode_fallback() {
	data := []byte(`{"id":1,"id":2}`)
	out, err := toon.Encode(nil, data, nil)
	if errors.Is(err, toon.ErrUnsupported) {
		out = data
	}
	fmt.Println(string(out))
	fmt.Println(err)
	// Output:
	// {"id":1,"id":2}
	// toon: cannot encode losslessly: the key "id" is repeated in an object (at byte 8 of the input); send it as JSON
}

func ExampleDecode() {
	out, err := toon.Decode(nil, []byte("items[2]{sku,qty,price}:\n  A1,2,9.99\n  B2,1,14.5000\nnote: \"a: b\""), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(out))
	_, err = toon.Decode(nil, []byte("tags[3]: a,b"), nil)
	fmt.Println(err)
	// Output:
	// {"items":[{"sku":"A1","qty":2,"price":9.99},{"sku":"B2","qty":1,"price":14.5}],"note":"a: b"}
	// toon: line 1: the array declares 3 values and has 2
}
